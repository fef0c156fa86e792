package bfsquery

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The answers file formats.
//
// CSV (small answers): the header "root,vertex,level" (",parent" with
// parents), then one row per root and target (per vertex without
// targets), in query order; level and parent are -1 where unreached.
//
// Binary (large answers), little endian:
//
//	offset  size        field
//	0       8           magic "GPBFS\x00v1"
//	8       4           flags: bit 0 set when parents follow the levels
//	12      4           0 (reserved)
//	16      8           vertices of the graph
//	24      4           answers
//	28      4           targets per answer, T (0: every vertex, T = vertices)
//	32      4*T         the target ids (absent when T is 0)
//	then per answer:
//	        4           root
//	        4           depth: the largest level reached
//	        8           reached: the vertices reached
//	        4*T         levels, -1 where unreached
//	        4*T         parents, -1 for the root and unreached (with flag bit 0)
const (
	// BinaryMagic opens a binary answers file.
	BinaryMagic = "GPBFS\x00v1"
	// BinaryHeaderBytes is the fixed header before the target ids.
	BinaryHeaderBytes = 32
	// FlagParents marks a binary file whose answers carry parents.
	FlagParents = 1
)

// Answers is a set of answers over one target list, as a file holds them.
type Answers struct {
	Vertices int
	// Targets are the target ids, or nil for every vertex.
	Targets []int32
	Parents bool
	Answers []Answer
}

// targetAt returns the vertex of answer column i.
func (a *Answers) targetAt(i int) int32 {
	if a.Targets == nil {
		return int32(i)
	}
	return a.Targets[i]
}

// columns is the entries of each answer.
func (a *Answers) columns() int {
	if a.Targets == nil {
		return a.Vertices
	}
	return len(a.Targets)
}

// WriteCSV writes the answers as CSV.
func (a *Answers) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	header := "root,vertex,level"
	if a.Parents {
		header += ",parent"
	}
	bw.WriteString(header + "\n")
	var buf []byte
	for _, ans := range a.Answers {
		for i := range a.columns() {
			buf = strconv.AppendInt(buf[:0], int64(ans.Root), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(a.targetAt(i)), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(ans.Levels[i]), 10)
			if a.Parents {
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, int64(ans.Parents[i]), 10)
			}
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// WriteBinary writes the answers in the binary format.
func (a *Answers) WriteBinary(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var h [BinaryHeaderBytes]byte
	copy(h[:8], BinaryMagic)
	if a.Parents {
		binary.LittleEndian.PutUint32(h[8:], FlagParents)
	}
	binary.LittleEndian.PutUint64(h[16:], uint64(a.Vertices))
	binary.LittleEndian.PutUint32(h[24:], uint32(len(a.Answers)))
	binary.LittleEndian.PutUint32(h[28:], uint32(len(a.Targets)))
	bw.Write(h[:])
	// Each word is appended to the writer's own buffer: a slice made per
	// word would be garbage of 8 bytes a level.
	word := func(v int32) { bw.Write(binary.LittleEndian.AppendUint32(bw.AvailableBuffer(), uint32(v))) }
	for _, t := range a.Targets {
		word(t)
	}
	for _, ans := range a.Answers {
		word(ans.Root)
		word(ans.Depth)
		bw.Write(binary.LittleEndian.AppendUint64(bw.AvailableBuffer(), uint64(ans.Reached)))
		for _, l := range ans.Levels {
			word(l)
		}
		if a.Parents {
			for _, p := range ans.Parents {
				word(p)
			}
		}
	}
	return bw.Flush()
}

// FormatError is a malformed binary answers file.
type FormatError struct {
	Offset int64
	Msg    string
}

// Error names the byte offset and ends with a "Fix:" sentence.
func (e *FormatError) Error() string {
	return fmt.Sprintf("answers file at byte %d: %s. Fix: read a file gpuplan bfs wrote in its binary format", e.Offset, e.Msg)
}

// ReadBinary reads a binary answers file of size bytes: the header's
// counts must account for exactly that size, which is checked before
// anything is allocated.
func ReadBinary(r io.Reader, size int64) (*Answers, error) {
	var h [BinaryHeaderBytes]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, &FormatError{Msg: "the header is short: " + err.Error()}
	}
	if string(h[:8]) != BinaryMagic {
		return nil, &FormatError{Msg: fmt.Sprintf("the magic is %q, not %q", h[:8], BinaryMagic)}
	}
	flags := binary.LittleEndian.Uint32(h[8:])
	if flags&^FlagParents != 0 || binary.LittleEndian.Uint32(h[12:]) != 0 {
		return nil, &FormatError{Offset: 8, Msg: "unknown flags"}
	}
	a := &Answers{Vertices: 0, Parents: flags&FlagParents != 0}
	vertices := binary.LittleEndian.Uint64(h[16:])
	answers, targets := uint64(binary.LittleEndian.Uint32(h[24:])), uint64(binary.LittleEndian.Uint32(h[28:]))
	if vertices == 0 || vertices > 1<<31 || targets > vertices {
		return nil, &FormatError{Offset: 16, Msg: fmt.Sprintf("%d vertices and %d targets", vertices, targets)}
	}
	cols := targets
	if cols == 0 {
		cols = vertices
	}
	per := 16 + 4*cols
	if a.Parents {
		per += 4 * cols
	}
	// Every count is checked against the file's size, without an overflow,
	// before anything is allocated.
	if size < BinaryHeaderBytes+4*int64(targets) {
		return nil, &FormatError{Offset: 28, Msg: fmt.Sprintf("%d target ids do not fit a file of %d bytes", targets, size)}
	}
	if rest := uint64(size) - BinaryHeaderBytes - 4*targets; rest%per != 0 || rest/per != answers {
		return nil, &FormatError{Offset: 24, Msg: fmt.Sprintf("the header says %d answers of %d bytes, and %d bytes follow the target ids", answers, per, rest)}
	}
	a.Vertices = int(vertices)
	br := bufio.NewReaderSize(r, 1<<16)
	off := int64(BinaryHeaderBytes)
	readWords := func(n uint64) ([]int32, error) {
		out := make([]int32, n)
		var b [4]byte
		for i := range out {
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return nil, &FormatError{Offset: off, Msg: "the file ends early"}
			}
			out[i] = int32(binary.LittleEndian.Uint32(b[:]))
			off += 4
		}
		return out, nil
	}
	var err error
	if targets > 0 {
		if a.Targets, err = readWords(targets); err != nil {
			return nil, err
		}
	}
	for range answers {
		head, err := readWords(4)
		if err != nil {
			return nil, err
		}
		ans := Answer{Root: head[0], Depth: head[1], Reached: int(uint64(uint32(head[2])) | uint64(uint32(head[3]))<<32)}
		if ans.Levels, err = readWords(cols); err != nil {
			return nil, err
		}
		if a.Parents {
			if ans.Parents, err = readWords(cols); err != nil {
				return nil, err
			}
		}
		a.Answers = append(a.Answers, ans)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		return nil, &FormatError{Offset: off, Msg: "bytes follow the last answer"}
	}
	return a, nil
}
