package egraph

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// AnyArity in Snapshot.OpArities accepts any number of children.
const AnyArity = math.MaxUint32

// Row is one e-node of a snapshot: an op of the language applied to the
// child e-classes Children[ChildrenOffset : ChildrenOffset+ChildrenLen].
type Row struct {
	EclassID       uint32 `json:"eclass_id"`
	LanguageOpID   uint32 `json:"language_op_id"`
	ChildrenOffset uint32 `json:"children_offset"`
	ChildrenLen    uint32 `json:"children_len"`
}

// Snapshot is an e-graph snapshot (vyre's GpuEGraphSnapshot): the rows, the
// shared children array of child e-class ids, and the language, given as the
// arity of every op id (op id i is known when i < len(OpArities)).
type Snapshot struct {
	Rows      []Row    `json:"rows"`
	Children  []uint32 `json:"children"`
	OpArities []uint32 `json:"op_arities"`
}

// ImageError is an integrity failure of a snapshot or a packed image
// (vyre's GpuEGraphDeviceImageError). Context names the violated rule, Row
// the row index and Value the offending value.
type ImageError struct {
	Context string
	Row     uint64
	Value   uint64
	Fix     string
}

// Error implements the error interface; the message ends with a Fix.
func (e *ImageError) Error() string {
	return fmt.Sprintf("e-graph image: %s at row %d (value %d). Fix: %s", e.Context, e.Row, e.Value, e.Fix)
}

// Integrity contexts reported by Validate, in the order they are checked.
const (
	CtxRowCount         = "row count exceeds u32"
	CtxChildCount       = "children count exceeds u32"
	CtxUnknownOp        = "unknown language_op_id"
	CtxChildrenRange    = "children range out of bounds"
	CtxArityMismatch    = "children_len does not match the op arity"
	CtxUnknownChildEcls = "unknown child eclass_id"
)

// Validate checks the snapshot's integrity. Counts must fit in u32; then,
// row by row: the op id is known, the children range lies inside Children
// (its end is the reported value), children_len equals the op arity unless
// that is AnyArity, and every child names an e-class that owns at least one
// row. The first violation is returned as an *ImageError.
func (s *Snapshot) Validate() error {
	return s.validate(math.MaxUint32)
}

func (s *Snapshot) validate(limit uint64) error {
	if uint64(len(s.Rows)) > limit {
		return &ImageError{Context: CtxRowCount, Value: uint64(len(s.Rows)), Fix: "split the e-graph into snapshots of at most 2^32-1 rows"}
	}
	if uint64(len(s.Children)) > limit {
		return &ImageError{Context: CtxChildCount, Value: uint64(len(s.Children)), Fix: "split the e-graph into snapshots of at most 2^32-1 children"}
	}
	classes := newClassSet(s.Rows)
	for i, r := range s.Rows {
		row := uint64(i)
		if uint64(r.LanguageOpID) >= uint64(len(s.OpArities)) {
			return &ImageError{Context: CtxUnknownOp, Row: row, Value: uint64(r.LanguageOpID), Fix: "add the op to op_arities or correct the row's language_op_id"}
		}
		end := uint64(r.ChildrenOffset) + uint64(r.ChildrenLen)
		if end > uint64(len(s.Children)) {
			return &ImageError{Context: CtxChildrenRange, Row: row, Value: end, Fix: "keep children_offset+children_len within the children array"}
		}
		if a := s.OpArities[r.LanguageOpID]; a != AnyArity && a != r.ChildrenLen {
			return &ImageError{Context: CtxArityMismatch, Row: row, Value: uint64(r.ChildrenLen), Fix: fmt.Sprintf("give op %d exactly %d children", r.LanguageOpID, a)}
		}
		for _, c := range s.Children[r.ChildrenOffset:end] {
			if !classes.has(c) {
				return &ImageError{Context: CtxUnknownChildEcls, Row: row, Value: uint64(c), Fix: "add a row for that e-class or correct the child id"}
			}
		}
	}
	return nil
}

// RowSignature is the documented 32-bit row signature: FNV-1a over the
// little-endian bytes of the words (language_op_id, children_len,
// children...). Structurally equal rows have equal signatures; the
// converse is checked exactly by CollectStructuralEquivalences.
// (vyre's egraph_row_signature is a different, unpublished hash.)
func RowSignature(op uint32, children []uint32) uint32 {
	const prime = 16777619
	h := uint32(2166136261)
	mix := func(w uint32) {
		for k := 0; k < 4; k++ {
			h ^= w & 0xff
			h *= prime
			w >>= 8
		}
	}
	mix(op)
	mix(uint32(len(children)))
	for _, c := range children {
		mix(c)
	}
	return h
}

// Section names one of the nine sections of the device image, in order.
type Section int

// The nine image sections, in upload order.
const (
	SecRowEclassIDs Section = iota
	SecRowLanguageOpIDs
	SecRowChildrenOffsets
	SecRowChildrenLens
	SecRowSignatures
	SecChildren
	SecGroupEclassIDs
	SecGroupOffsets
	SecGroupRows
	sectionCount
)

// SectionCount is the number of image sections.
const SectionCount = int(sectionCount)

var sectionNames = [...]string{"row_eclass_ids", "row_language_op_ids", "row_children_offsets", "row_children_lens",
	"row_signatures", "children", "group_eclass_ids", "group_offsets", "group_rows"}

// String returns the section's snake_case name.
func (s Section) String() string {
	if s >= 0 && s < sectionCount {
		return sectionNames[s]
	}
	return fmt.Sprintf("section(%d)", int(s))
}

// DeviceImage is an e-graph packed into one flat u32 word array (vyre's
// GpuEGraphDeviceImage). Sections, in order, with lengths: row_eclass_ids
// R, row_language_op_ids R, row_children_offsets R, row_children_lens R,
// row_signatures R, children C, group_eclass_ids G (unique e-class ids,
// ascending), group_offsets G+1 (prefix offsets into group_rows), group_rows
// R (row indices grouped by e-class, in row order).
type DeviceImage struct {
	RowCount   uint32   `json:"row_count"`
	ChildCount uint32   `json:"child_count"`
	GroupCount uint32   `json:"group_count"`
	Words      []uint32 `json:"words"`
}

// sectionWords returns the word offset and length of every section.
func sectionWords(r, c, g uint64) (off, length [SectionCount]uint64) {
	length = [SectionCount]uint64{r, r, r, r, r, c, g, g + 1, r}
	var at uint64
	for i, l := range length {
		off[i] = at
		at += l
	}
	return off, length
}

// imageWordCount returns 6R + C + 2G + 1, checked.
func imageWordCount(r, c, g uint64) (uint64, error) {
	rw, err := checked.Mul(r, 6, "e-graph image words")
	if err != nil {
		return 0, err
	}
	gw, err := checked.Mul(g, 2, "e-graph image words")
	if err != nil {
		return 0, err
	}
	return checked.Sum("e-graph image words", rw, c, gw, 1)
}

// Section returns the words of section s. The image must be well formed
// (see CheckShape).
func (img *DeviceImage) Section(s Section) []uint32 {
	off, l := sectionWords(uint64(img.RowCount), uint64(img.ChildCount), uint64(img.GroupCount))
	return img.Words[off[s] : off[s]+l[s]]
}

// CheckShape verifies that the word count matches the section counts.
func (img *DeviceImage) CheckShape() error {
	want, err := imageWordCount(uint64(img.RowCount), uint64(img.ChildCount), uint64(img.GroupCount))
	if err != nil {
		return err
	}
	if uint64(len(img.Words)) != want {
		return &ImageError{Context: "image word count does not match 6*rows+children+2*groups+1", Value: uint64(len(img.Words)),
			Fix: fmt.Sprintf("supply exactly %d words for %d rows, %d children and %d groups", want, img.RowCount, img.ChildCount, img.GroupCount)}
	}
	return nil
}

// PackDeviceImage validates s and packs it into the flat device image.
// Errors are those of Validate.
func PackDeviceImage(s *Snapshot) (*DeviceImage, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r, c := len(s.Rows), len(s.Children)
	// Group rows by e-class: sort packed (eclass, row) words.
	keys := make([]uint64, r)
	for i, row := range s.Rows {
		keys[i] = uint64(row.EclassID)<<32 | uint64(i)
	}
	slices.Sort(keys)
	g := 0
	for i := range keys {
		if i == 0 || keys[i]>>32 != keys[i-1]>>32 {
			g++
		}
	}
	total, err := imageWordCount(uint64(r), uint64(c), uint64(g))
	if err != nil {
		return nil, err
	}
	if total > math.MaxInt {
		return nil, &checked.OverflowError{Field: "e-graph image words"}
	}
	img := &DeviceImage{RowCount: uint32(r), ChildCount: uint32(c), GroupCount: uint32(g), Words: make([]uint32, total)}
	w := func(sec Section) []uint32 { return img.Section(sec) }
	ecl, ops, offs, lens, sigs := w(SecRowEclassIDs), w(SecRowLanguageOpIDs), w(SecRowChildrenOffsets), w(SecRowChildrenLens), w(SecRowSignatures)
	for i, row := range s.Rows {
		ecl[i], ops[i], offs[i], lens[i] = row.EclassID, row.LanguageOpID, row.ChildrenOffset, row.ChildrenLen
		sigs[i] = RowSignature(row.LanguageOpID, s.Children[row.ChildrenOffset:row.ChildrenOffset+row.ChildrenLen])
	}
	copy(w(SecChildren), s.Children)
	gids, goffs, grows := w(SecGroupEclassIDs), w(SecGroupOffsets), w(SecGroupRows)
	k := 0
	for i, key := range keys {
		grows[i] = uint32(key)
		if i == 0 || key>>32 != keys[i-1]>>32 {
			gids[k] = uint32(key >> 32)
			goffs[k] = uint32(i)
			k++
		}
	}
	goffs[g] = uint32(r)
	return img, nil
}

// ByteSpan is one section of the image in bytes.
type ByteSpan struct {
	Offset  uint64 `json:"offset"`
	ByteLen uint64 `json:"byte_len"`
}

// End returns Offset+ByteLen (spans of a valid layout never overflow).
func (s ByteSpan) End() uint64 { return s.Offset + s.ByteLen }

// ByteLayout is the byte layout of an image (vyre's
// CudaEGraphDeviceByteLayout): the counts and the nine section spans.
type ByteLayout struct {
	RowCount   uint32                 `json:"row_count"`
	ChildCount uint32                 `json:"child_count"`
	GroupCount uint32                 `json:"group_count"`
	Spans      [SectionCount]ByteSpan `json:"spans"`
}

// UploadPlan is the single-buffer upload of an image: the words, their
// byte layout and the total byte length.
type UploadPlan struct {
	Words   []uint32   `json:"-"`
	Layout  ByteLayout `json:"layout"`
	ByteLen uint64     `json:"byte_len"`
}

// ByteSizeOverflowError reports a word span whose byte size (words x 4)
// does not fit in 64 bits.
type ByteSizeOverflowError struct {
	Context string
	Words   uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *ByteSizeOverflowError) Error() string {
	return fmt.Sprintf("ByteSizeOverflow: %s of %d words does not fit in 64-bit bytes. Fix: split the e-graph into smaller images", e.Context, e.Words)
}

func wordsToBytes(context string, words uint64) (uint64, error) {
	b, err := checked.Mul(words, 4, context)
	if err != nil {
		return 0, &ByteSizeOverflowError{Context: context, Words: words}
	}
	return b, nil
}

// layoutFromCounts turns the word spans of an image with these counts into
// byte spans, each multiplied by 4 with overflow checks.
func layoutFromCounts(r, c, g uint64) (ByteLayout, uint64, error) {
	off, l := sectionWords(r, c, g)
	lay := ByteLayout{RowCount: uint32(r), ChildCount: uint32(c), GroupCount: uint32(g)}
	for i := range off {
		o, err := wordsToBytes(sectionNames[i]+" offset", off[i])
		if err != nil {
			return ByteLayout{}, 0, err
		}
		n, err := wordsToBytes(sectionNames[i], l[i])
		if err != nil {
			return ByteLayout{}, 0, err
		}
		lay.Spans[i] = ByteSpan{Offset: o, ByteLen: n}
	}
	words, err := imageWordCount(r, c, g)
	if err != nil {
		return ByteLayout{}, 0, &ByteSizeOverflowError{Context: "image", Words: math.MaxUint64}
	}
	total, err := wordsToBytes("image", words)
	return lay, total, err
}

// PlanDeviceUploadFromImage plans the upload of an already packed image.
// The image shape is checked first (CheckShape); span sizes that overflow
// are *ByteSizeOverflowError.
func PlanDeviceUploadFromImage(img *DeviceImage) (UploadPlan, error) {
	if err := img.CheckShape(); err != nil {
		return UploadPlan{}, err
	}
	lay, total, err := layoutFromCounts(uint64(img.RowCount), uint64(img.ChildCount), uint64(img.GroupCount))
	if err != nil {
		return UploadPlan{}, err
	}
	return UploadPlan{Words: img.Words, Layout: lay, ByteLen: total}, nil
}

// PlanDeviceUpload packs s and plans its upload (vyre's
// plan_cuda_egraph_device_upload). Errors are *ImageError from packing and
// *ByteSizeOverflowError.
func PlanDeviceUpload(s *Snapshot) (UploadPlan, error) {
	img, err := PackDeviceImage(s)
	if err != nil {
		return UploadPlan{}, err
	}
	return PlanDeviceUploadFromImage(img)
}

// KernelView is the device-side view of an uploaded image: the base device
// pointer and one pointer per section (base + span offset).
type KernelView struct {
	Base     uint64               `json:"base"`
	Layout   ByteLayout           `json:"layout"`
	ByteLen  uint64               `json:"byte_len"`
	Pointers [SectionCount]uint64 `json:"pointers"`
}

// KernelViewError reports a span that ends past the image or a pointer sum
// that overflows.
type KernelViewError struct {
	Section Section
	End     uint64
	ByteLen uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *KernelViewError) Error() string {
	return fmt.Sprintf("e-graph kernel view: section %s ends at byte %d beyond the image of %d bytes (or its pointer overflows). Fix: rebuild the upload plan for this image", e.Section, e.End, e.ByteLen)
}

// NewKernelView builds the kernel view of plan uploaded at device address
// base (vyre's egraph_device_kernel_view).
func NewKernelView(base uint64, plan UploadPlan) (KernelView, error) {
	v := KernelView{Base: base, Layout: plan.Layout, ByteLen: plan.ByteLen}
	for i, s := range plan.Layout.Spans {
		end, err := checked.Add(s.Offset, s.ByteLen, "section end")
		if err != nil || end > plan.ByteLen {
			return KernelView{}, &KernelViewError{Section: Section(i), End: end, ByteLen: plan.ByteLen}
		}
		p, err := checked.Add(base, s.Offset, "section pointer")
		if err != nil {
			return KernelView{}, &KernelViewError{Section: Section(i), End: end, ByteLen: plan.ByteLen}
		}
		v.Pointers[i] = p
	}
	return v, nil
}

// classSet is the set of e-class ids that own a row: a dense bitmap when
// the ids are small, otherwise a sorted unique slice searched by bisection.
type classSet struct {
	bits   []uint64
	sorted []uint32
}

func newClassSet(rows []Row) classSet {
	var maxID uint32
	for _, r := range rows {
		maxID = max(maxID, r.EclassID)
	}
	if uint64(maxID) < 64*uint64(len(rows))+4096 {
		b := make([]uint64, uint64(maxID)/64+1)
		for _, r := range rows {
			b[r.EclassID/64] |= 1 << (r.EclassID % 64)
		}
		return classSet{bits: b}
	}
	ids := make([]uint32, len(rows))
	for i, r := range rows {
		ids[i] = r.EclassID
	}
	slices.Sort(ids)
	return classSet{sorted: slices.Compact(ids)}
}

func (c classSet) has(id uint32) bool {
	if c.bits != nil {
		w := uint64(id) / 64
		return w < uint64(len(c.bits)) && c.bits[w]&(1<<(id%64)) != 0
	}
	_, ok := slices.BinarySearch(c.sorted, id)
	return ok
}
