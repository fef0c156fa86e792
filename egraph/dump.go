package egraph

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// DumpMagic is the first line of an egg pre-rebuild dump.
const DumpMagic = "egg-prerebuild-dump v1"

// preallocCap bounds how many entries a header count may reserve up front
// when the input's size is unknown: a header that claims more than the
// input holds cannot make the reader reserve memory for it. Beyond this,
// the arrays grow as lines arrive.
const preallocCap = 1 << 20

// Sized is an input that knows its size in bytes (bytes.Reader,
// strings.Reader, or a wrapper around an opened file). ReadDump uses it to
// reserve the arrays the header promises at once, since a line takes at
// least 4 bytes ("0 0" and its newline).
type Sized interface {
	Size() int64
}

// prealloc returns how many entries to reserve for a header's claim.
func (d *dumpReader) prealloc(claim int) int {
	if d.size > 0 {
		return min(claim, int(min(d.size/4, MaxGraphLen)))
	}
	return min(claim, preallocCap)
}

// reserve returns s with room for extra more entries. It doubles the
// capacity, but not past claim (the count the header promises) unless the
// entries need it: reading N e-nodes copies each entry about once, where
// append's growth of large slices by a quarter would copy it four times.
func reserve(s []int32, extra, claim int) []int32 {
	need := len(s) + extra
	if need <= cap(s) {
		return s
	}
	grown := make([]int32, len(s), max(need, min(2*cap(s), claim)))
	copy(grown, s)
	return grown
}

// dumpReader holds the state of one ReadDump call.
type dumpReader struct {
	lr *lineReader
	g  *Graph
	// classesLine is the line of the "classes C" header.
	classesLine int
	// size is the input's size in bytes when known (Sized), else 0.
	size int64
}

// ReadDump reads an e-graph in egg's pre-rebuild dump format, version 1:
//
//	egg-prerebuild-dump v1
//	ops K                      then K lines "<code> <arity> <name>", codes 0..K-1 in order
//	classes C                  class ids are 0..C-1, each owned by an e-node
//	nodes N                    then N lines "<class> <op> <child>..." with arity(op) children
//	unions U                   then U lines "<a> <b> <m>" (m is 1 if egg merged, else 0)
//	end
//
// Blank lines and lines starting with '#' are comments. The input is
// streamed: memory is the flat arrays of the Graph, with no allocation per
// line; when r is Sized, the arrays are reserved once from the header's
// counts. Every error is a *LineError naming the line: a malformed line, an
// id out of range, an op whose children disagree with its arity, an empty
// e-graph, counts that disagree with the header, a class id without an
// e-node, or data after "end". The m flags are checked to be 0 or 1 and
// then dropped (WriteDump recomputes them).
func ReadDump(r io.Reader) (*Graph, error) {
	d := &dumpReader{lr: newLineReader(r), g: &Graph{}}
	if s, ok := r.(Sized); ok {
		d.size = s.Size()
	}
	end := func() error {
		return d.readEnd(fmt.Sprintf("%d union lines", d.g.UnionCount()), "make the unions header count the union lines, and end the dump with \"end\"")
	}
	steps := []func() error{d.readMagic, d.readOps, d.readClasses, d.readNodes, d.readUnions, end}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return d.g, nil
}

// errAt returns a *LineError at the current line.
func (d *dumpReader) errAt(fix, format string, args ...any) error {
	return &LineError{Line: d.lr.line, Msg: fmt.Sprintf(format, args...), Fix: fix}
}

// nextLine returns the next data line. At the end of the input it fails
// naming the expected line: what, or "what i of n" when n > 0 (formatted
// only then, so that reading allocates nothing per line).
func (d *dumpReader) nextLine(what string, i, n int32) ([]byte, error) {
	s, err := d.lr.next()
	if err == io.EOF {
		if n > 0 {
			what = fmt.Sprintf("%s %d of %d", what, i+1, n)
		}
		return nil, &LineError{Line: d.lr.line, Msg: "the input ends where " + what + " was expected",
			Fix: "check that the dump was written completely (it ends with a line \"end\")"}
	}
	return s, err
}

func (d *dumpReader) readMagic() error {
	s, err := d.lr.next()
	if err == io.EOF {
		return &LineError{Msg: "the input is empty", Fix: "pass an egg-prerebuild-dump v1 file"}
	}
	if err != nil {
		return err
	}
	if string(s) != DumpMagic {
		return d.errAt("pass a file written by egg-bench (its first line is \""+DumpMagic+"\")",
			"the first line is %s, not %q", quote(s), DumpMagic)
	}
	return nil
}

// readHeader reads a line "<keyword> <count>" and returns the count.
func (d *dumpReader) readHeader(keyword string) (int32, error) {
	s, err := d.nextLine("\""+keyword+" <count>\"", 0, 0)
	if err != nil {
		return 0, err
	}
	f := fields{s: s}
	fix := fmt.Sprintf("write the line as \"%s <count>\"", keyword)
	if string(f.token()) != keyword {
		return 0, d.errAt(fix, "expected \"%s <count>\", found %s", keyword, quote(s))
	}
	tok := f.token()
	n, err := parseID(tok)
	if err != nil {
		return 0, d.errAt(fix, "the %s count %s is %v", keyword, quote(tok), err)
	}
	if !f.done() {
		return 0, d.errAt(fix, "unexpected text after the %s count", keyword)
	}
	return n, nil
}

func (d *dumpReader) readOps() error {
	k, err := d.readHeader("ops")
	if err != nil {
		return err
	}
	d.g.Ops = make([]OpDecl, 0, min(int(k), 4096))
	for i := int32(0); i < k; i++ {
		if err := d.readOp(i, k); err != nil {
			return err
		}
	}
	return nil
}

func (d *dumpReader) readOp(i, k int32) error {
	s, err := d.nextLine("op line", i, k)
	if err != nil {
		return err
	}
	f := fields{s: s}
	fix := "write op lines as \"<code> <arity> <name>\", codes 0, 1, 2, ... in order, as many as the ops header says"
	code, err := parseID(f.token())
	if err != nil || code != i {
		return d.errAt(fix, "expected op line %d of %d (code %d), found %s", i+1, k, i, quote(s))
	}
	tok := f.token()
	arity, err := parseID(tok)
	if err != nil {
		return d.errAt(fix, "op %d: the arity %s is %v", code, quote(tok), err)
	}
	name := f.token()
	if name == nil || !f.done() {
		return d.errAt(fix, "op %d: expected one name after the arity, found %s", code, quote(s))
	}
	d.g.Ops = append(d.g.Ops, OpDecl{Arity: arity, Name: string(name)})
	return nil
}

func (d *dumpReader) readClasses() error {
	c, err := d.readHeader("classes")
	if err != nil {
		return err
	}
	if c == 0 {
		return d.errAt("dump an e-graph with at least one e-class", "the e-graph is empty (classes 0)")
	}
	d.g.ClassCount, d.classesLine = c, d.lr.line
	return nil
}

func (d *dumpReader) readNodes() error {
	n, err := d.readHeader("nodes")
	if err != nil {
		return err
	}
	if n == 0 {
		return d.errAt("dump an e-graph with at least one e-node", "the e-graph is empty (nodes 0)")
	}
	if n == MaxGraphLen {
		return d.errAt("split the e-graph", "%d e-nodes exceed the limit of %d", n, MaxGraphLen-1)
	}
	g := d.g
	g.NodeClass = make([]int32, 0, d.prealloc(int(n)))
	g.NodeOp = make([]int32, 0, d.prealloc(int(n)))
	g.ChildStart = make([]int32, 1, d.prealloc(int(n))+1)
	g.Children = make([]int32, 0, d.prealloc(2*int(n)))
	for i := int32(0); i < n; i++ {
		if err := d.readNode(i, n); err != nil {
			return err
		}
	}
	if c := g.Children; cap(c) > len(c)+len(c)/4+preallocCap {
		// The doublings left much unused room: give it back.
		g.Children = append(make([]int32, 0, len(c)), c...)
	}
	return nil
}

// checkOwned checks that every class id owns an e-node line; the error
// names the classes header.
func (d *dumpReader) checkOwned() error {
	g := d.g
	owned := make([]uint64, (int(g.ClassCount)+63)/64)
	for _, c := range g.NodeClass {
		owned[c/64] |= 1 << (c % 64)
	}
	for c := int32(0); c < g.ClassCount; c++ {
		if owned[c/64]&(1<<(c%64)) == 0 {
			return &LineError{Line: d.classesLine, Msg: fmt.Sprintf("class id %d has no e-node line, but the header says classes %d", c, g.ClassCount),
				Fix: "number the class ids densely 0..C-1 and give each at least one e-node line"}
		}
	}
	return nil
}

// readNode reads e-node line i of n.
func (d *dumpReader) readNode(i, n int32) error {
	s, err := d.nextLine("e-node line", i, n)
	if err != nil {
		return err
	}
	g := d.g
	f := fields{s: s}
	tok := f.token()
	class, err := parseID(tok)
	if err != nil {
		if isKeyword(tok) {
			return d.errAt("make the nodes header count the e-node lines", "found %s after only %d e-node lines, but the header says nodes %d", quote(tok), i, n)
		}
		return d.errAt("write e-node lines as \"<class> <op> <child>...\"", "e-node line %d: the class %s is %v", i+1, quote(tok), err)
	}
	if class >= g.ClassCount {
		return d.errAt("raise the classes count or correct the class id", "e-node line %d: class id %d is outside 0..%d", i+1, class, g.ClassCount-1)
	}
	tok = f.token()
	op, err := parseID(tok)
	if err != nil || int(op) >= len(g.Ops) {
		return d.errAt("declare the op in the ops section or correct the e-node's op", "e-node line %d: op %s is not one of the %d declared ops", i+1, quote(tok), len(g.Ops))
	}
	if err := d.readChildren(&f, i, op); err != nil {
		return err
	}
	g.NodeClass = append(reserve(g.NodeClass, 1, int(n)), class)
	g.NodeOp = append(reserve(g.NodeOp, 1, int(n)), op)
	if len(g.Children) >= MaxGraphLen {
		return d.errAt("split the e-graph", "more than %d children in all", MaxGraphLen-1)
	}
	g.ChildStart = append(reserve(g.ChildStart, 1, int(n)+1), int32(len(g.Children)))
	return nil
}

// readChildren appends the children of e-node line i, checking them
// against the op's arity and the class count.
func (d *dumpReader) readChildren(f *fields, i, op int32) error {
	g := d.g
	decl := g.Ops[op]
	var have int32
	for tok := f.token(); tok != nil; tok = f.token() {
		c, err := parseID(tok)
		if err != nil {
			return d.errAt("write children as class ids", "e-node line %d: child %d %s is %v", i+1, have, quote(tok), err)
		}
		if c >= g.ClassCount {
			return d.errAt("name a class id that owns an e-node", "e-node line %d: child %d is class id %d, outside 0..%d", i+1, have, c, g.ClassCount-1)
		}
		if have == decl.Arity {
			return d.errAt(fmt.Sprintf("give the e-node exactly %d children, or correct the op's declared arity", decl.Arity),
				"e-node line %d: op %d (%s) is declared with arity %d but the line has more children", i+1, op, decl.Name, decl.Arity)
		}
		g.Children = append(reserve(g.Children, 1, MaxGraphLen), c)
		have++
	}
	if have != decl.Arity {
		return d.errAt(fmt.Sprintf("give the e-node exactly %d children, or correct the op's declared arity", decl.Arity),
			"e-node line %d: op %d (%s) is declared with arity %d but the line has %d children", i+1, op, decl.Name, decl.Arity, have)
	}
	return nil
}

func isKeyword(tok []byte) bool {
	switch string(tok) {
	case "ops", "classes", "nodes", "unions", "end":
		return true
	}
	return false
}

func (d *dumpReader) readUnions() error {
	u, err := d.readHeader("unions")
	if err != nil {
		return err
	}
	if err := d.checkOwned(); err != nil {
		return err
	}
	if int64(u)*2 > MaxGraphLen {
		return d.errAt("split the union list", "%d unions exceed the limit of %d", u, MaxGraphLen/2)
	}
	d.g.Unions = make([]int32, 0, 2*d.prealloc(int(u)))
	for k := int32(0); k < u; k++ {
		if err := d.readUnion(k, u); err != nil {
			return err
		}
	}
	return nil
}

// readUnion reads union line k of u.
func (d *dumpReader) readUnion(k, u int32) error {
	s, err := d.nextLine("union line", k, u)
	if err != nil {
		return err
	}
	f := fields{s: s}
	fix := "write union lines as \"<a> <b> <m>\" with class ids a and b and m 0 or 1"
	var v [3]int32
	for j, name := range []string{"a", "b", "m"} {
		tok := f.token()
		x, err := parseID(tok)
		if err != nil {
			if j == 0 && isKeyword(tok) {
				return d.errAt("make the unions header count the union lines", "found %s after only %d union lines, but the header says unions %d", quote(tok), k, u)
			}
			return d.errAt(fix, "union line %d: %s %s is %v", k+1, name, quote(tok), err)
		}
		v[j] = x
	}
	if !f.done() {
		return d.errAt(fix, "union line %d: unexpected text after m", k+1)
	}
	for j := range 2 {
		if v[j] >= d.g.ClassCount {
			return d.errAt("union only class ids that own e-nodes", "union line %d: %s is class id %d, outside 0..%d", k+1, "ab"[j:j+1], v[j], d.g.ClassCount-1)
		}
	}
	if v[2] > 1 {
		return d.errAt(fix, "union line %d: m is %d, not 0 or 1", k+1, v[2])
	}
	d.g.Unions = append(reserve(d.g.Unions, 2, 2*int(u)), v[0], v[1])
	return nil
}

// readEnd reads the final "end" line, which comes after (the lines read
// last), and checks that only comments follow it.
func (d *dumpReader) readEnd(after, fix string) error {
	s, err := d.nextLine("\"end\"", 0, 0)
	if err != nil {
		return err
	}
	if string(s) != "end" {
		return d.errAt(fix, "expected \"end\" after %s, found %s", after, quote(s))
	}
	s, err = d.lr.next()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	return d.errAt("remove what follows \"end\" (only comments may follow)", "unexpected data after \"end\": %s", quote(s))
}

// WriteDump writes g in the egg-prerebuild-dump v1 format that ReadDump
// reads. comments (without '#') become comment lines after the first
// line. Each union's m flag is recomputed: 1 if the pair joined two classes
// not yet joined by the pairs before it, as egg records it. Variadic ops
// cannot be written (the format declares one arity per op); g must be
// valid.
func WriteDump(w io.Writer, g *Graph, comments ...string) error {
	if err := g.Validate(); err != nil {
		return err
	}
	for i, op := range g.Ops {
		if op.Arity == VariadicArity {
			return &GraphError{Field: fmt.Sprintf("ops[%d].arity", i), Msg: "a variadic op cannot be written to a dump", Fix: "give the op a fixed arity"}
		}
		if op.Name == "" || bytes.ContainsAny([]byte(op.Name), " \t\r\n\v\f") {
			return &GraphError{Field: fmt.Sprintf("ops[%d].name", i), Msg: fmt.Sprintf("name %q is empty or contains white space", op.Name), Fix: "name the op with one word"}
		}
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(DumpMagic + "\n")
	for _, c := range comments {
		fmt.Fprintf(bw, "# %s\n", c)
	}
	fmt.Fprintf(bw, "ops %d\n", len(g.Ops))
	for i, op := range g.Ops {
		fmt.Fprintf(bw, "%d %d %s\n", i, op.Arity, op.Name)
	}
	fmt.Fprintf(bw, "classes %d\nnodes %d\n", g.ClassCount, g.NodeCount())
	var num []byte
	for i := range g.NodeClass {
		num = strconv.AppendInt(num[:0], int64(g.NodeClass[i]), 10)
		num = append(num, ' ')
		num = strconv.AppendInt(num, int64(g.NodeOp[i]), 10)
		for _, c := range g.NodeChildren(i) {
			num = append(num, ' ')
			num = strconv.AppendInt(num, int64(c), 10)
		}
		bw.Write(append(num, '\n'))
	}
	fmt.Fprintf(bw, "unions %d\n", g.UnionCount())
	uf := newMinUnionFind(g.ClassCount)
	for k := 0; k < len(g.Unions); k += 2 {
		m := 0
		if uf.union(g.Unions[k], g.Unions[k+1]) {
			m = 1
		}
		num = strconv.AppendInt(num[:0], int64(g.Unions[k]), 10)
		num = append(num, ' ')
		num = strconv.AppendInt(num, int64(g.Unions[k+1]), 10)
		num = append(num, ' ', byte('0'+m), '\n')
		bw.Write(num)
	}
	bw.WriteString("end\n")
	return bw.Flush()
}

// IsDump reports whether the first data line of head (blank and comment
// lines skipped) is DumpMagic; head is the start of an input.
func IsDump(head []byte) bool {
	lr := newLineReader(bytes.NewReader(head))
	s, err := lr.next()
	return err == nil && string(s) == DumpMagic
}
