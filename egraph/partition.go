package egraph

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// PartitionMagic is the first line of an egg partition file.
const PartitionMagic = "egg-partition v1"

// distinctComment starts the comment line that records the number of
// distinct canonical e-nodes after the rebuild.
const distinctComment = "# distinct canonical e-nodes after rebuild"

// Partition is the final class of every e-node line of a dump: egg's
// .post.txt. Class ids are those of the dump; compare partitions only up to
// renaming (ComparePartitions), since which member names a class is a
// choice.
type Partition struct {
	// Classes[i] is the class of e-node line i.
	Classes []int32 `json:"classes"`
	// ClassCount is the number of distinct values in Classes.
	ClassCount int `json:"class_count"`
	// DistinctNodes is the number of distinct canonical e-nodes after the
	// rebuild, from the file's comment; -1 when the file does not say.
	DistinctNodes int `json:"distinct_nodes"`
}

// ReadPartition reads a partition file: either egg's format
//
//	egg-partition v1
//	# distinct canonical e-nodes after rebuild (egg total_number_of_nodes): E
//	nodes N
//	classes P
//	<class of e-node line 0>     N lines
//	...
//	end
//
// or just one class id per line. Blank lines and '#' lines are comments
// (the one above sets DistinctNodes). Errors are *LineError values naming
// the line: a malformed line, a count that disagrees with the header
// (lines against nodes N, distinct values against classes P), no lines at
// all, or data after "end".
func ReadPartition(r io.Reader) (*Partition, error) {
	lr := newLineReader(r)
	p := &Partition{DistinctNodes: -1}
	lr.comment = func(s []byte) { p.noteComment(s) }
	first, err := lr.next()
	if err == io.EOF {
		return nil, &LineError{Msg: "the partition is empty", Fix: "pass an egg-partition v1 file or one class id per e-node line"}
	}
	if err != nil {
		return nil, err
	}
	if string(first) != PartitionMagic {
		err = p.readPlain(lr, first)
	} else {
		err = p.readEgg(lr)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Partition) noteComment(s []byte) {
	if !bytes.HasPrefix(s, []byte(distinctComment)) {
		return
	}
	if i := bytes.LastIndexByte(s, ':'); i >= 0 {
		if v, err := parseID(bytes.TrimSpace(s[i+1:])); err == nil {
			p.DistinctNodes = int(v)
		}
	}
}

// readPlain reads one class id per line, first being the first line.
func (p *Partition) readPlain(lr *lineReader, first []byte) error {
	for s := first; ; {
		v, err := parseID(s)
		if err != nil {
			return &LineError{Line: lr.line, Msg: fmt.Sprintf("class %s is %v", quote(s), err),
				Fix: "write one class id per line, or start the file with \"" + PartitionMagic + "\""}
		}
		if len(p.Classes) == MaxGraphLen-1 {
			return &LineError{Line: lr.line, Msg: fmt.Sprintf("more than %d lines", MaxGraphLen-1), Fix: "split the e-graph"}
		}
		p.Classes = append(p.Classes, v)
		if s, err = lr.next(); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
	}
	p.ClassCount = countDistinct(p.Classes)
	return nil
}

// readEgg reads the egg-partition v1 body after its first line.
func (p *Partition) readEgg(lr *lineReader) error {
	d := &dumpReader{lr: lr}
	n, err := d.readHeader("nodes")
	if err != nil {
		return err
	}
	if n == 0 {
		return d.errAt("write a partition of at least one e-node", "the partition is empty (nodes 0)")
	}
	classes, err := d.readHeader("classes")
	if err != nil {
		return err
	}
	classesLine := lr.line
	p.Classes = make([]int32, 0, min(int(n), preallocCap))
	for i := int32(0); i < n; i++ {
		s, err := d.nextLine("class line", i, n)
		if err != nil {
			return err
		}
		v, err := parseID(s)
		if err != nil {
			if isKeyword(s) {
				return d.errAt("make the nodes header count the class lines", "found %s after only %d class lines, but the header says nodes %d", quote(s), i, n)
			}
			return d.errAt("write one class id per line", "class line %d: %s is %v", i+1, quote(s), err)
		}
		p.Classes = append(reserve(p.Classes, 1, int(n)), v)
	}
	if err := d.readEnd(fmt.Sprintf("%d class lines", n), "make the nodes header count the class lines, and end the file with \"end\""); err != nil {
		return err
	}
	p.ClassCount = countDistinct(p.Classes)
	if p.ClassCount != int(classes) {
		return &LineError{Line: classesLine, Msg: fmt.Sprintf("the header says classes %d but the lines hold %d distinct class ids", classes, p.ClassCount),
			Fix: "count the distinct class ids in the classes header"}
	}
	return nil
}

// countDistinct returns the number of distinct values of v.
func countDistinct(v []int32) int {
	var top int32
	for _, x := range v {
		top = max(top, x)
	}
	if int64(top) <= 8*int64(len(v))+1024 {
		seen := make([]bool, int(top)+1)
		n := 0
		for _, x := range v {
			if !seen[x] {
				seen[x] = true
				n++
			}
		}
		return n
	}
	seen := make(map[int32]struct{}, len(v))
	for _, x := range v {
		seen[x] = struct{}{}
	}
	return len(seen)
}

// WritePartition writes classes (the class of every e-node line) in the
// egg-partition v1 format. distinct, when not negative, is written as the
// comment that records the distinct canonical e-nodes; comments (without
// '#') follow it.
func WritePartition(w io.Writer, classes []int32, distinct int, comments ...string) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(PartitionMagic + "\n")
	if distinct >= 0 {
		fmt.Fprintf(bw, "%s (egg total_number_of_nodes): %d\n", distinctComment, distinct)
	}
	for _, c := range comments {
		fmt.Fprintf(bw, "# %s\n", c)
	}
	fmt.Fprintf(bw, "nodes %d\nclasses %d\n", len(classes), countDistinct(classes))
	var num []byte
	for _, c := range classes {
		num = strconv.AppendInt(num[:0], int64(c), 10)
		bw.Write(append(num, '\n'))
	}
	bw.WriteString("end\n")
	return bw.Flush()
}

// PartitionMismatchError reports two partitions that differ. Line is the
// first e-node line (0-based) where they disagree, or -1 when their
// lengths differ.
type PartitionMismatchError struct {
	Line int
	Msg  string
}

// Error says where the partitions differ and ends with a Fix.
func (e *PartitionMismatchError) Error() string {
	if e.Line < 0 {
		return fmt.Sprintf("partitions differ: %s. Fix: compare partitions of the same dump", e.Msg)
	}
	return fmt.Sprintf("partitions differ at e-node line %d: %s. Fix: check the rebuild that produced either partition against the reference", e.Line, e.Msg)
}

// ComparePartitions checks that a and b describe the same partition of
// e-node lines up to renaming of the classes: a one-to-one map takes every
// class of a to the class of b on the same lines. It returns nil or a
// *PartitionMismatchError naming the first line that breaks the map.
func ComparePartitions(a, b []int32) error {
	if len(a) != len(b) {
		return &PartitionMismatchError{Line: -1, Msg: fmt.Sprintf("%d e-node lines against %d", len(a), len(b))}
	}
	ab, ba := newRenaming(a), newRenaming(b)
	for i := range a {
		if y, ok := ab.get(a[i]); ok && y != b[i] {
			return &PartitionMismatchError{Line: i, Msg: fmt.Sprintf("class %d of the first is class %d on an earlier line of the second but %d here", a[i], y, b[i])}
		}
		if x, ok := ba.get(b[i]); ok && x != a[i] {
			return &PartitionMismatchError{Line: i, Msg: fmt.Sprintf("class %d of the second is class %d on an earlier line of the first but %d here", b[i], x, a[i])}
		}
		ab.set(a[i], b[i])
		ba.set(b[i], a[i])
	}
	return nil
}

// renaming maps class ids to class ids: a dense array when the ids are
// small, a map otherwise.
type renaming struct {
	dense []int32 // -1: unset
	m     map[int32]int32
}

func newRenaming(v []int32) renaming {
	var top int32
	for _, x := range v {
		top = max(top, x)
	}
	if int64(top) > 8*int64(len(v))+1024 {
		return renaming{m: make(map[int32]int32)}
	}
	d := make([]int32, int(top)+1)
	for i := range d {
		d[i] = -1
	}
	return renaming{dense: d}
}

func (r renaming) get(x int32) (int32, bool) {
	if r.m != nil {
		y, ok := r.m[x]
		return y, ok
	}
	return r.dense[x], r.dense[x] >= 0
}

func (r renaming) set(x, y int32) {
	if r.m != nil {
		r.m[x] = y
		return
	}
	r.dense[x] = y
}
