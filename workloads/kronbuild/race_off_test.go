//go:build cuda && !race

package kronbuild

// raceEnabled is true in a test binary built with -race, whose CPU work is
// many times slower: the GPU tests then leave out their largest inputs.
const raceEnabled = false
