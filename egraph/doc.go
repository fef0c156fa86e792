// Package egraph provides e-graph state packed for the GPU: the flat device
// image of an e-graph snapshot and the launch-wave plans of the
// equality-saturation kernels that run over it.
//
// It ports the planning parts of vyre-driver-cuda's egraph_device_image,
// egraph_kernel_plan and egraph_readback modules; nothing here touches a GPU.
//
//   - Snapshot and Snapshot.Validate: rows (eclass_id, language_op_id,
//     children_offset, children_len), the children array and the language
//     as op arities. Integrity failures are *ImageError values naming the
//     rule, the row and the offending value.
//   - PackDeviceImage: one flat u32 image with nine sections in order
//     (row_eclass_ids, row_language_op_ids, row_children_offsets,
//     row_children_lens, row_signatures, children, group_eclass_ids,
//     group_offsets, group_rows). RowSignature documents the signature hash
//     (FNV-1a over op, children_len and children).
//   - PlanDeviceUpload / PlanDeviceUploadFromImage: the byte layout, every
//     span multiplied by 4 with overflow checks; NewKernelView: per-section
//     device pointers.
//   - PlanKernelWork: RowScan, ChildEdgeScan and EclassGroupScan waves.
//   - PlanSignatureBuckets, SignaturePairRows, CollectStructuralEquivalences,
//     PlanStructuralEquivalenceOutput, PlanScratchSlab: candidate pairs of
//     equal-signature rows, decoded by binary search without materialising
//     them, and the CPU reference of the structural-equivalence kernel.
//   - PlanUnionCompaction: union-find with the smallest e-class id as the
//     representative, and the canonical rewrite records.
//   - DecodeReadbackPairs / DecodeReadbackPairsUnique: the readback format
//     (an 8-byte LE count, then 8-byte (left, right) u32 LE pairs).
//
// The rebuild side restores congruence after unions, as egg's rebuild()
// does:
//
//   - Graph: an e-graph waiting for congruence repair in flat int32 arrays
//     (e-nodes with class, op and children; pending union pairs), read
//     from egg's pre-rebuild dump (ReadDump, streamed, errors naming the
//     line), converted from a Snapshot (FromSnapshot) or generated with
//     planted congruences and adversarial shapes (Generate, ParseGenSpec).
//   - Rebuild: the CPU reference, egg's deferred rebuild (union-find,
//     hash-cons, worklist of parents to repair).
//   - RebuildRounds: the same closure in data-parallel rounds, the
//     specification of the GPU rebuild.
//   - RebuildIncremental: the same rounds, with the same pairs and round
//     count, where a round after the first canonicalises and re-inserts
//     only the e-nodes its unions changed (found through a uses index)
//     into a table kept across rounds: the specification of the GPU's
//     incremental rounds.
//   - RebuildHybrid (RebuildHybridWith, HybridOptions): those rounds while
//     each unites many classes, at most 64, then the worklist from their
//     state: the same closure, never quadratic.
//   - ReadPartition, WritePartition, ComparePartitions: egg's partition
//     format and comparison up to renaming.
package egraph
