package main

// commands lists gpuplan's subcommands in the order help prints them, by
// theme: devices and kernels, planning (the megakernel plan, the planners,
// token/fact and e-graph), measurement and evidence, then version.
// Each subcommand lives in its own file next to this one.
func commands() []command {
	return []command{
		{name: "devices", summary: "list built-in GPU device profiles or show one (custom JSON, live probe)", run: runDevices},
		{name: "occupancy", summary: "exact occupancy of a kernel on a device: one block size or a sweep", run: runOccupancy},
		{name: "diagnose", summary: "check a kernel launch shape against a device (vyre's stable message)", run: runDiagnose},
		{name: "plan", summary: "plan a megakernel wave DAG: barriers, per-producer waits, topology, memory, convergence", run: runPlan},
		{name: "fuse", summary: "fuse adjacent pipeline stages into fewer launches", run: runFuse},
		{name: "compact", summary: "pack small kernel outputs into one compact readback", run: runCompact},
		{name: "batch", summary: "batch queries over resident graphs into few launches", run: runBatch},
		{name: "session", summary: "plan repeated runs over one resident graph: peak bytes, avoided uploads and fences", run: runSession},
		{name: "diagnostics", summary: "aggregate kernel diagnostics on the device for one compact readback", run: runDiagnostics},
		{name: "passes", summary: "choose optimisation passes from benchmark evidence", run: runPasses},
		{name: "queue", summary: "plan a device work queue and its drain", run: runQueue},
		{name: "tokenfact", summary: "plan a frontier run over a resident token/fact graph", run: runTokenfact},
		{name: "partition", summary: "partition a graph over several GPUs: per-device memory and each level's predicted exchange", run: runPartition},
		{name: "egraph", summary: "pack an e-graph for the GPU and plan its saturation kernels", run: runEgraph},
		{name: "run", summary: "run a wave DAG of your own kernels by its plans in five arms side by side, checked, with evidence", run: runRun},
		{name: "bfs", summary: "answer BFS queries over a graph kept resident: levels, distances to targets, parents (GPU, or the CPU reference)", run: runBFS},
		{name: "serve", summary: "serve BFS queries over resident graphs on HTTP/JSON, concurrent queries batched into multi-source passes", run: runServe},
		{name: "load", summary: "drive a BFS query server with concurrent clients: throughput, latency percentiles, batch sizes, answers checked", run: runLoad},
		{name: "bench", summary: "measure GPU execution arms side by side and write evidence (cuda build)", run: runBench},
		{name: "gate", summary: "check release claims against recorded evidence; validate vyre evidence CSVs", run: runGate},
		{name: "report", summary: "tabulate and chart recorded evidence (Markdown, CSV, Go benchmark format, JSON; PNG/SVG)", run: runReport},
		{name: "compare", summary: "compare two evidence runs, benchstat-style: medians, CI, delta and p-value", run: runCompare},
		{name: "version", summary: "print the gpuplan version", run: runVersion},
	}
}
