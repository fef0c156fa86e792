package rendezvous

import (
	"fmt"
	"strconv"
)

// The environment a launcher sets for every process of a run, one process
// per GPU; FromEnv reads it.
const (
	// RankEnv is the process's rank, 0 to the world size minus 1. Rank 0
	// listens for the others.
	RankEnv = "GPUPLAN_RANK"
	// WorldSizeEnv is the number of ranks (processes) of the run.
	WorldSizeEnv = "GPUPLAN_WORLD_SIZE"
	// AddressEnv is rank 0's host:port: where rank 0 listens and every other
	// rank connects. Needed when the ranks run on several machines.
	AddressEnv = "GPUPLAN_RENDEZVOUS"
	// FileEnv is a file rank 0 writes its address to, for the ranks of one
	// machine that are not told the address.
	FileEnv = "GPUPLAN_RENDEZVOUS_FILE"
)

// FromEnv returns the Config that RankEnv, WorldSizeEnv, AddressEnv and
// FileEnv describe; lookup is usually os.LookupEnv. The caller adds the
// device key and the timeouts.
func FromEnv(lookup func(key string) (string, bool)) (Config, error) {
	num := func(key string) (int, error) {
		v, ok := lookup(key)
		if !ok || v == "" {
			return 0, &Error{Rank: -1, Reason: ReasonConfig, Msg: key + " is not set",
				Fix: fmt.Sprintf("set %s and %s in the environment of every process (rank 0 to the world size minus 1)", RankEnv, WorldSizeEnv)}
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, &Error{Rank: -1, Reason: ReasonConfig, Msg: fmt.Sprintf("%s=%q is not a number", key, v),
				Fix: fmt.Sprintf("set %s to a decimal integer", key)}
		}
		return n, nil
	}
	var cfg Config
	var err error
	if cfg.Rank, err = num(RankEnv); err != nil {
		return Config{}, err
	}
	if cfg.WorldSize, err = num(WorldSizeEnv); err != nil {
		return Config{}, err
	}
	cfg.Address, _ = lookup(AddressEnv)
	cfg.File, _ = lookup(FileEnv)
	if cfg.WorldSize > 1 && cfg.Address == "" && cfg.File == "" {
		return Config{}, &Error{Rank: cfg.Rank, Reason: ReasonConfig, Msg: fmt.Sprintf("neither %s nor %s is set for a world of %d ranks", AddressEnv, FileEnv, cfg.WorldSize),
			Fix: fmt.Sprintf("set %s to rank 0's host:port on every process, or %s to a file path on one machine", AddressEnv, FileEnv)}
	}
	if err := cfg.check(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
