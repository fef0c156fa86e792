package rendezvous

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The deadlines of the tests: a rendezvous that succeeds finishes in
// milliseconds over loopback; one that waits for an absent rank gives up
// after short.
const (
	long  = 900 * time.Millisecond
	short = 150 * time.Millisecond
	io100 = 100 * time.Millisecond
)

const key = "NVIDIA H200|580.159.04"

// conf returns rank's Config in a world of world ranks.
func conf(rank, world int) Config {
	return Config{Rank: rank, WorldSize: world, DeviceKey: key, Timeout: long, IOTimeout: io100}
}

// payload returns a payload whose bytes depend on seed.
func payload(seed byte) Payload {
	var p Payload
	for i := range p {
		p[i] = seed + byte(i)
	}
	return p
}

// result is what one rank's side returned.
type result struct {
	p   Payload
	err error
}

// listen starts rank 0 and fails the test when it cannot.
func listen(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Listen(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// joinAll runs Join for every config, each on its own goroutine, against
// addr, and returns their results in the order given once all returned.
func joinAll(ctx context.Context, addr string, cfgs []Config) func() []result {
	res := make([]result, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		if c.Address == "" && c.File == "" {
			c.Address = addr
		}
		wg.Go(func() {
			p, err := Join(ctx, c)
			res[i] = result{p, err}
		})
	}
	return func() []result { wg.Wait(); return res }
}

// asError returns err as an *Error, failing the test when it is not one.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Contains(t, err.Error(), "Fix:")
	return e
}

func TestRendezvousHandsEveryRankThePayload(t *testing.T) {
	for _, world := range []int{1, 2, 8} {
		t.Run(fmt.Sprint(world), func(t *testing.T) {
			s := listen(t, conf(0, world))
			var cfgs []Config
			for r := 1; r < world; r++ {
				cfgs = append(cfgs, conf(r, world))
			}
			wait := joinAll(context.Background(), s.Addr(), cfgs)
			want := payload(byte(world))
			t0 := time.Now()
			require.NoError(t, s.Serve(context.Background(), want))
			for i, r := range wait() {
				require.NoError(t, r.err, "rank %d", i+1)
				assert.Equal(t, want, r.p, "rank %d", i+1)
			}
			assert.Less(t, time.Since(t0), long, "nobody waited for a deadline")
			assert.ErrorContains(t, s.Serve(context.Background(), want), "Serve was called again")
		})
	}
}

// TestRendezvousRefusesDisagreeingRanks: a hello that disagrees with rank
// 0 fails the rendezvous on rank 0, and the offending rank returns rank
// 0's refusal.
func TestRendezvousRefusesDisagreeingRanks(t *testing.T) {
	cases := []struct {
		name   string
		world  int
		ranks  []Config // the joining ranks; the last one disagrees
		msg    string   // in rank 0's error and the last rank's refusal
		fix    string
		others bool // the other joining ranks were refused as well
	}{
		{"duplicate rank", 3, []Config{conf(1, 3), conf(1, 3)}, "rank 1 joined twice, from 127.0.0.1:", fixRanks, true},
		{"wrong world size", 3, []Config{conf(2, 4)}, "rank 2 was started with a world of 4 ranks, rank 0 with 3", fixWorld, false},
		{"mismatched device key", 2, []Config{{Rank: 1, WorldSize: 2, DeviceKey: "NVIDIA A100|535.0", Timeout: long, IOTimeout: io100}},
			`rank 1's device key "NVIDIA A100|535.0" differs from rank 0's "NVIDIA H200|580.159.04"`, fixKey, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := listen(t, conf(0, tc.world))
			// The agreeing ranks join first, so that the last one is the
			// one rank 0 refuses.
			n := len(tc.ranks) - 1
			first := joinAll(context.Background(), s.Addr(), tc.ranks[:n])
			served := make(chan error, 1)
			go func() { served <- s.Serve(context.Background(), payload(1)) }()
			time.Sleep(20 * time.Millisecond)
			last := joinAll(context.Background(), s.Addr(), tc.ranks[n:])()[0]

			e := asError(t, <-served)
			assert.Equal(t, ReasonMismatch, e.Reason)
			assert.Contains(t, e.Msg, tc.msg)
			assert.Equal(t, tc.fix, e.Fix)
			assert.Equal(t, s.Addr(), e.Addr)

			le := asError(t, last.err)
			assert.Equal(t, ReasonRefused, le.Reason)
			assert.Contains(t, le.Error(), tc.msg)
			assert.Contains(t, le.Error(), "Fix: "+tc.fix)
			for _, r := range first() {
				assert.Error(t, r.err)
				if tc.others {
					assert.Contains(t, r.err.Error(), tc.msg)
				}
			}
		})
	}
}

func TestRankZeroNamesTheRanksThatNeverJoined(t *testing.T) {
	cfg := conf(0, 4)
	cfg.Timeout = short
	s := listen(t, cfg)
	wait := joinAll(context.Background(), s.Addr(), []Config{conf(2, 4)})
	t0 := time.Now()
	e := asError(t, s.Serve(context.Background(), payload(0)))
	assert.Less(t, time.Since(t0), short+long/2)
	assert.Equal(t, ReasonTimeout, e.Reason)
	assert.Equal(t, []int{1, 3}, e.Missing)
	assert.Contains(t, e.Error(), "rendezvous: rank 0 (rank 0 at "+s.Addr()+"): ranks 1, 3 of 4 did not join within")
	assert.Contains(t, e.Error(), "Fix: start every rank within the timeout")

	j := asError(t, wait()[0].err)
	assert.Equal(t, ReasonRefused, j.Reason)
	assert.Contains(t, j.Error(), "rank 2 (rank 0 at "+s.Addr()+"): refused: rank 0 at "+s.Addr()+" gave up: ranks 1, 3 of 4 did not join")
}

func TestRankZeroCanBeCanceled(t *testing.T) {
	s := listen(t, conf(0, 2))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	e := asError(t, s.Serve(ctx, payload(0)))
	assert.Equal(t, ReasonCanceled, e.Reason)
	assert.ErrorIs(t, e, context.Canceled)
	assert.Equal(t, []int{1}, e.Missing)
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// silentServer accepts connections on loopback and answers each with
// answer (nothing when empty), without closing them until the test ends.
func silentServer(t *testing.T, answer []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			if len(answer) > 0 {
				_, _ = c.Write(answer)
			}
		}
	}()
	return ln.Addr().String()
}

// TestJoiningRankFailsNamingTheAddress: a joining rank never waits past
// its deadline, and its error names where it looked for rank 0.
func TestJoiningRankFailsNamingTheAddress(t *testing.T) {
	missingFile := filepath.Join(t.TempDir(), "rendezvous.addr")
	cases := []struct {
		name   string
		addr   string
		file   string
		reason Reason
		msg    string
	}{
		{"rank 0 absent", closedPort(t), "", ReasonUnreachable, "could not reach rank 0 within"},
		{"address file absent", "", missingFile, ReasonUnreachable, "the address file did not name rank 0's address within"},
		{"rank 0 never answers", silentServer(t, nil), "", ReasonTimeout, "rank 0 accepted the connection but sent no answer within"},
		{"rank 0 answers garbage", silentServer(t, []byte("HTTP/1.1 400 Bad Request\r\n\r\n")), "", ReasonProtocol, `does not start with "GPRV"`},
		{"rank 0 answers an oversized refusal", silentServer(t, []byte("GPRV\x00\x01\x01\xff\xff\xff\xff")), "", ReasonProtocol, "the refusal is 4294967295 bytes, more than the 1024 allowed"},
		{"rank 0 stops mid-answer", silentServer(t, []byte("GPRV\x00\x01\x00short")), "", ReasonTimeout, "sent no answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := conf(1, 2)
			cfg.Address, cfg.File, cfg.Timeout = tc.addr, tc.file, short
			t0 := time.Now()
			_, err := Join(context.Background(), cfg)
			assert.Less(t, time.Since(t0), 2*short+io100+long/2, "the deadline holds")
			e := asError(t, err)
			assert.Equal(t, tc.reason, e.Reason, "%v", err)
			assert.Contains(t, e.Error(), tc.msg)
			where := tc.addr
			if where == "" {
				where = tc.file
			}
			assert.Equal(t, where, e.Addr)
			assert.Contains(t, e.Error(), "(rank 0 at "+where+")")
		})
	}
}

func TestJoinCanBeCanceled(t *testing.T) {
	cfg := conf(1, 2)
	cfg.Address = closedPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	e := asError(t, func() error { _, err := Join(ctx, cfg); return err }())
	assert.Equal(t, ReasonCanceled, e.Reason)
	assert.ErrorIs(t, e, context.Canceled)
}

// rawHello encodes a hello field by field, however wrong.
func rawHello(magic string, version uint16, rank, world, keyLen uint32, key string) []byte {
	b := []byte(magic)
	b = binary.BigEndian.AppendUint16(b, version)
	b = binary.BigEndian.AppendUint32(b, rank)
	b = binary.BigEndian.AppendUint32(b, world)
	b = binary.BigEndian.AppendUint32(b, keyLen)
	return append(b, key...)
}

// TestRankZeroRefusesStrangers: a connection that sends no valid hello is
// refused and closed, and the real ranks still meet.
func TestRankZeroRefusesStrangers(t *testing.T) {
	cases := []struct {
		name    string
		send    []byte
		refusal string // "" when rank 0 closes without an answer
		silent  bool   // the stranger sends nothing more and waits
	}{
		{"http request", []byte("GET / HTTP/1.0\r\nHost: x\r\n\r\n"), `the message does not start with "GPRV" (it starts with "GET ")`, false},
		{"wrong version", rawHello(Magic, 9, 1, 2, 0, ""), "the peer speaks rendezvous protocol version 9, this process version 1", false},
		{"oversized key", rawHello(Magic, Version, 1, 2, 1<<32-1, ""), "the hello's device key is 4294967295 bytes, more than the 256 allowed", false},
		{"key over its bound", rawHello(Magic, Version, 1, 2, MaxKeyLen+1, string(make([]byte, MaxKeyLen+1))), "257 bytes, more than the 256 allowed", false},
		{"truncated hello", rawHello(Magic, Version, 1, 2, 10, "abc"), "", false},
		{"silence", nil, "", true},
		{"half a header, then silence", []byte("GPRV\x00"), "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := listen(t, conf(0, 2))
			served := make(chan error, 1)
			go func() { served <- s.Serve(context.Background(), payload(7)) }()

			c, err := net.Dial("tcp", s.Addr())
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Write(tc.send)
			require.NoError(t, err)
			join := func() {
				r := joinAll(context.Background(), s.Addr(), []Config{conf(1, 2)})()[0]
				require.NoError(t, r.err)
				assert.Equal(t, payload(7), r.p)
				require.NoError(t, <-served)
			}
			if tc.silent {
				// The stranger holds its connection open: the real rank
				// meets rank 0 all the same, and Serve closes the stranger.
				t0 := time.Now()
				join()
				assert.Less(t, time.Since(t0), io100, "the stranger's read deadline did not hold anyone up")
			} else if tc.refusal == "" {
				_ = c.(*net.TCPConn).CloseWrite()
			}
			require.NoError(t, c.SetReadDeadline(time.Now().Add(long)))
			_, msg, refused, err := readAnswer(c)
			if tc.refusal == "" {
				assert.False(t, refused)
				var we *wireError
				require.ErrorAs(t, err, &we, "rank 0 closed the connection")
				assert.True(t, we.closed)
			} else {
				require.NoError(t, err)
				assert.True(t, refused)
				assert.Contains(t, msg, tc.refusal)
				assert.Contains(t, msg, "refused the connection from 127.0.0.1:")
				assert.Contains(t, msg, "Fix: "+fixProtocol)
			}
			if !tc.silent {
				join()
			}
		})
	}
}

// TestRankZeroRefusesHellosOutOfRange: a hello that claims rank 0, or a
// rank past the world, fails the rendezvous (Join refuses to send one).
func TestRankZeroRefusesHellosOutOfRange(t *testing.T) {
	for _, rank := range []uint32{0, 3, 1<<32 - 1} {
		t.Run(fmt.Sprint(rank), func(t *testing.T) {
			s := listen(t, conf(0, 3))
			served := make(chan error, 1)
			go func() { served <- s.Serve(context.Background(), payload(0)) }()
			c, err := net.Dial("tcp", s.Addr())
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Write(appendHello(nil, hello{rank: rank, world: 3, key: key}))
			require.NoError(t, err)
			_, msg, refused, err := readAnswer(c)
			require.NoError(t, err)
			assert.True(t, refused)
			want := fmt.Sprintf("a rank joined as rank %d, outside 1..2", rank)
			assert.Contains(t, msg, want)
			e := asError(t, <-served)
			assert.Equal(t, ReasonMismatch, e.Reason)
			assert.Contains(t, e.Msg, want)
		})
	}
}

// TestStrangersAreNamedWhenRankZeroGivesUp: rank 0's timeout also says it
// refused connections that were not ranks.
func TestStrangersAreNamedWhenRankZeroGivesUp(t *testing.T) {
	cfg := conf(0, 2)
	cfg.Timeout = short
	s := listen(t, cfg)
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background(), payload(0)) }()
	c, err := net.Dial("tcp", s.Addr())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
	require.NoError(t, err)
	e := asError(t, <-served)
	assert.Equal(t, ReasonTimeout, e.Reason)
	assert.Equal(t, []int{1}, e.Missing)
	assert.Contains(t, e.Msg, `1 connection(s) that were not ranks were refused, the first: 127.0.0.1:`)
	assert.Contains(t, e.Msg, `(it starts with "SSH-")`)
}

// TestAddressFileHandoff: a rank that starts before rank 0 finds it
// through the address file, past a stale address a previous run left.
func TestAddressFileHandoff(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rendezvous.addr")
	require.NoError(t, writeAddressFile(file, closedPort(t)))
	var cfgs []Config
	for r := 1; r < 3; r++ {
		c := conf(r, 3)
		c.File = file
		cfgs = append(cfgs, c)
	}
	wait := joinAll(context.Background(), "", cfgs)
	time.Sleep(30 * time.Millisecond)

	c0 := conf(0, 3)
	c0.File = file
	s := listen(t, c0)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, s.Addr()+"\n", string(got))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left beside the address file")

	require.NoError(t, s.Serve(context.Background(), payload(3)))
	for _, r := range wait() {
		require.NoError(t, r.err)
		assert.Equal(t, payload(3), r.p)
	}
	_, err = os.Stat(file)
	assert.ErrorIs(t, err, os.ErrNotExist, "rank 0 removes its address file when the rendezvous ends")
}

func TestAddressFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	_, err := readAddressFile(write("junk", "not an address"))
	assert.ErrorContains(t, err, `holds "not an address", not host:port`)
	_, err = readAddressFile(write("big", string(make([]byte, maxFileLen+1))))
	assert.ErrorContains(t, err, "is longer than 512 bytes")
	a, err := readAddressFile(write("ok", " 127.0.0.1:29500\n"))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:29500", a)

	c := conf(0, 2)
	c.File = filepath.Join(dir, "no", "such", "dir", "addr")
	_, err = Listen(c)
	e := asError(t, err)
	assert.Equal(t, ReasonConfig, e.Reason)
	assert.Contains(t, e.Error(), "cannot write the address file")

	// A file that names another address is left alone.
	other := write("other", "127.0.0.1:1\n")
	removeAddressFile(other, "127.0.0.1:2")
	_, err = os.Stat(other)
	assert.NoError(t, err)
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"world of zero", Config{Rank: 0, WorldSize: 0}, "the world size 0 is outside 1..65536"},
		{"world too large", Config{Rank: 0, WorldSize: MaxWorldSize + 1}, "the world size 65537 is outside"},
		{"rank past the world", Config{Rank: 2, WorldSize: 2, Address: "127.0.0.1:1"}, "rank 2 is outside 0..1 (a world of 2)"},
		{"negative rank", Config{Rank: -1, WorldSize: 2}, "rank -1 is outside 0..1"},
		{"long key", Config{Rank: 0, WorldSize: 1, DeviceKey: string(make([]byte, MaxKeyLen+1))}, "the device key is 257 bytes, more than 256"},
		{"negative timeout", Config{Rank: 0, WorldSize: 1, Timeout: -1}, "are negative"},
		{"no address", Config{Rank: 1, WorldSize: 2}, "rank 1 has neither rank 0's address nor an address file"},
		{"bad address", Config{Rank: 1, WorldSize: 2, Address: "node0"}, `the address "node0" is not host:port`},
		{"joining port 0", Config{Rank: 1, WorldSize: 2, Address: "127.0.0.1:0"}, "a joining rank needs rank 0's port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.cfg.Rank == 0 {
				_, err = Listen(tc.cfg)
			} else {
				_, err = Join(context.Background(), tc.cfg)
			}
			e := asError(t, err)
			assert.Equal(t, ReasonConfig, e.Reason)
			assert.Contains(t, e.Error(), tc.msg)
		})
	}
	_, err := Listen(conf(1, 2))
	assert.ErrorContains(t, err, "only rank 0 listens")
	_, err = Join(context.Background(), conf(0, 2))
	assert.ErrorContains(t, err, "rank 0 does not join, it listens")
	_, err = Listen(Config{WorldSize: 2, Address: "127.0.0.1:99999"})
	assert.ErrorContains(t, err, "cannot listen")
}

func TestExchange(t *testing.T) {
	const world = 3
	file := filepath.Join(t.TempDir(), "addr")
	res := make([]result, world)
	var wg sync.WaitGroup
	for r := range world {
		c := conf(r, world)
		c.File = file
		wg.Go(func() {
			res[r].p, res[r].err = Exchange(context.Background(), c, func() (Payload, error) { return payload(42), nil })
		})
	}
	wg.Wait()
	for r := range res {
		require.NoError(t, res[r].err, "rank %d", r)
		assert.Equal(t, payload(42), res[r].p)
	}
	p, err := Exchange(context.Background(), conf(0, 1), func() (Payload, error) { return payload(5), nil })
	require.NoError(t, err)
	assert.Equal(t, payload(5), p, "a world of one listens on nothing")
	boom := errors.New("no id")
	_, err = Exchange(context.Background(), conf(0, 1), func() (Payload, error) { return Payload{}, boom })
	assert.ErrorIs(t, err, boom)
	_, err = Exchange(context.Background(), Config{WorldSize: 0}, nil)
	assert.ErrorContains(t, err, "the world size 0")
}

func TestFromEnv(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want Config
		msg  string
	}{
		{"one process", map[string]string{RankEnv: "0", WorldSizeEnv: "1"}, Config{Rank: 0, WorldSize: 1}, ""},
		{"multi-node", map[string]string{RankEnv: "3", WorldSizeEnv: "8", AddressEnv: "node0:29500"}, Config{Rank: 3, WorldSize: 8, Address: "node0:29500"}, ""},
		{"one machine", map[string]string{RankEnv: "0", WorldSizeEnv: "2", FileEnv: "/tmp/r"}, Config{Rank: 0, WorldSize: 2, File: "/tmp/r"}, ""},
		{"no rank", map[string]string{WorldSizeEnv: "2"}, Config{}, "GPUPLAN_RANK is not set. Fix: set GPUPLAN_RANK and GPUPLAN_WORLD_SIZE"},
		{"bad world", map[string]string{RankEnv: "0", WorldSizeEnv: "two"}, Config{}, `GPUPLAN_WORLD_SIZE="two" is not a number`},
		{"nowhere to meet", map[string]string{RankEnv: "1", WorldSizeEnv: "2"}, Config{}, "neither GPUPLAN_RENDEZVOUS nor GPUPLAN_RENDEZVOUS_FILE is set for a world of 2 ranks"},
		{"rank past the world", map[string]string{RankEnv: "2", WorldSizeEnv: "2", AddressEnv: "h:1"}, Config{}, "rank 2 is outside 0..1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.msg != "" {
				asError(t, err)
				assert.ErrorContains(t, err, tc.msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestDialableAddress(t *testing.T) {
	assert.Equal(t, "127.0.0.1:5", dialable(&net.TCPAddr{IP: net.IPv4zero, Port: 5}))
	assert.Equal(t, "[::1]:5", dialable(&net.TCPAddr{IP: net.IPv6unspecified, Port: 5}))
	assert.Equal(t, "10.0.0.2:5", dialable(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 5}))
}

func TestReasonNames(t *testing.T) {
	assert.Equal(t, "timeout", ReasonTimeout.String())
	assert.Equal(t, "reason(99)", Reason(99).String())
	e := &Error{Rank: -1, Reason: ReasonConfig, Msg: "x", Fix: "y"}
	assert.Equal(t, "rendezvous: x. Fix: y", e.Error())
	assert.Nil(t, e.Unwrap())
}
