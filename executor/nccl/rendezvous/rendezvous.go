// Package rendezvous lets the processes of one NCCL communicator agree on
// its unique id before they join it: rank 0 listens on TCP, every other
// rank dials it and says who it is, and once every rank has joined and
// agrees with rank 0, rank 0 hands every rank the same 128-byte payload
// (the ncclUniqueId that ncclCommInitRank needs).
//
// Rank 0 listens on Config.Address: by default a free port on loopback
// (127.0.0.1), for the processes of one machine; an explicit host:port
// (":29500", "node0:29500") for ranks on several machines. It can also
// write its address to Config.File (a temporary file renamed into place),
// so the ranks of one machine find it without being told the port. The
// environment of a launch is read by FromEnv (RankEnv, WorldSizeEnv,
// AddressEnv, FileEnv).
//
// Each joining rank sends a hello (Magic, Version, its rank, the world size
// it was started with, and a short device key such as the GPU's name and
// driver). Rank 0 checks every hello: the rank in 1..world-1 and not seen
// before, the same world size and the same device key as its own. A hello
// that disagrees fails the rendezvous on every rank: rank 0 sends each
// rank that joined a refusal, which that rank returns as its error. A
// connection that is not a rank at all (a wrong magic, a length over its
// bound, a partial message) is refused and closed, and rank 0 keeps
// waiting for the real ranks.
//
// Nothing waits without a deadline. Rank 0 waits Config.Timeout for every
// rank and then fails naming the ranks that did not join; a joining rank
// tries for Config.Timeout to reach rank 0 and then waits as long again
// for its answer; every single read and write also has Config.IOTimeout.
// A length sent by a peer is checked against its bound (MaxKeyLen,
// MaxMessageLen) before anything is allocated for it. Every error is an
// *Error whose message ends with a "Fix:" sentence.
package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// DefaultAddress is where rank 0 listens when Config.Address is empty:
	// a free port on loopback.
	DefaultAddress = "127.0.0.1:0"
	// DefaultTimeout is Config.Timeout's default.
	DefaultTimeout = 60 * time.Second
	// DefaultIOTimeout is Config.IOTimeout's default.
	DefaultIOTimeout = 5 * time.Second
	// maxPending bounds the connections whose hello rank 0 reads at once;
	// more are closed as they arrive.
	maxPending = 64
	// maxBackoff bounds the pause between a joining rank's attempts to
	// reach rank 0.
	maxBackoff = 100 * time.Millisecond
)

// Config is one rank's part of a rendezvous.
type Config struct {
	// Rank is this process's rank, 0 to WorldSize-1; rank 0 listens.
	Rank int
	// WorldSize is the number of ranks, 1 to MaxWorldSize.
	WorldSize int
	// Address is the host:port rank 0 listens on (empty: DefaultAddress)
	// and every other rank dials. A joining rank with no Address reads it
	// from File.
	Address string
	// File, when set, is where rank 0 writes its listening address (and
	// removes it when the rendezvous ends); a joining rank without an
	// Address reads the address from it, waiting for it to appear.
	File string
	// DeviceKey describes the rank's device, such as the GPU's name and
	// driver version; rank 0 refuses a rank whose key differs from its own.
	// At most MaxKeyLen bytes.
	DeviceKey string
	// Timeout bounds the rendezvous (zero: DefaultTimeout): rank 0 waits
	// this long for every rank; a joining rank tries this long to reach
	// rank 0, then waits this long plus IOTimeout for its answer.
	Timeout time.Duration
	// IOTimeout bounds every single read, write and connection attempt
	// (zero: DefaultIOTimeout).
	IOTimeout time.Duration
}

// withDefaults fills the zero durations.
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.IOTimeout == 0 {
		c.IOTimeout = DefaultIOTimeout
	}
	return c
}

// check validates c for its rank's side.
func (c Config) check() error {
	bad := func(fix, format string, a ...any) error {
		return &Error{Rank: c.Rank, Reason: ReasonConfig, Msg: fmt.Sprintf(format, a...), Fix: fix}
	}
	switch {
	case c.WorldSize < 1 || c.WorldSize > MaxWorldSize:
		return bad(fmt.Sprintf("set the world size to the number of processes, 1 to %d", MaxWorldSize), "the world size %d is outside 1..%d", c.WorldSize, MaxWorldSize)
	case c.Rank < 0 || c.Rank >= c.WorldSize:
		return bad(fixRanks, "rank %d is outside 0..%d (a world of %d)", c.Rank, c.WorldSize-1, c.WorldSize)
	case len(c.DeviceKey) > MaxKeyLen:
		return bad(fmt.Sprintf("shorten the device key to %d bytes", MaxKeyLen), "the device key is %d bytes, more than %d", len(c.DeviceKey), MaxKeyLen)
	case c.Timeout < 0 || c.IOTimeout < 0:
		return bad("pass positive timeouts, or zero for the defaults", "the timeouts %v and %v are negative", c.Timeout, c.IOTimeout)
	case c.Rank > 0 && c.WorldSize > 1 && c.Address == "" && c.File == "":
		return bad("pass every rank rank 0's address ("+AddressEnv+") or the file rank 0 writes it to ("+FileEnv+")", "rank %d has neither rank 0's address nor an address file", c.Rank)
	}
	if c.Address != "" {
		_, port, err := net.SplitHostPort(c.Address)
		if err == nil && c.Rank > 0 && (port == "0" || port == "") {
			err = errors.New("a joining rank needs rank 0's port")
		}
		if err != nil {
			return &Error{Rank: c.Rank, Reason: ReasonConfig, Msg: fmt.Sprintf("the address %q is not host:port", c.Address), Err: err,
				Fix: "pass an address such as 127.0.0.1:29500 or node0:29500"}
		}
	}
	return nil
}

// Server is rank 0's side of a rendezvous: it listens from Listen on, and
// Serve answers the ranks.
type Server struct {
	cfg    Config
	ln     net.Listener
	addr   string
	once   sync.Once
	served atomic.Bool
}

// Listen starts rank 0's side: it listens on cfg.Address (DefaultAddress
// when empty) and, when cfg.File is set, writes the address there.
// Serve then waits for the other ranks; Close (which Serve calls) stops
// listening.
func Listen(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if cfg.Rank != 0 {
		return nil, &Error{Rank: cfg.Rank, Reason: ReasonConfig, Msg: "only rank 0 listens", Fix: "call Join on every rank but 0 (or Exchange on every rank)"}
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	addr := cfg.Address
	if addr == "" {
		addr = DefaultAddress
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &Error{Rank: 0, Addr: addr, Reason: ReasonNetwork, Msg: "cannot listen", Err: err,
			Fix: "pick a free port on an address of this machine, or leave the address empty for a free loopback port"}
	}
	s := &Server{cfg: cfg, ln: ln, addr: dialable(ln.Addr())}
	if cfg.File != "" {
		if err := writeAddressFile(cfg.File, s.addr); err != nil {
			_ = ln.Close()
			return nil, &Error{Rank: 0, Addr: s.addr, Reason: ReasonConfig, Msg: fmt.Sprintf("cannot write the address file %s", cfg.File), Err: err,
				Fix: "pass a rendezvous file in a writable directory"}
		}
	}
	return s, nil
}

// dialable returns a as an address the ranks can dial: an unspecified
// host (0.0.0.0, ::) becomes the loopback address of its family.
func dialable(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return a.String()
	}
	ip := net.IPv4(127, 0, 0, 1)
	if ta.IP.To4() == nil {
		ip = net.IPv6loopback
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(ta.Port))
}

// Addr returns the address the other ranks dial.
func (s *Server) Addr() string { return s.addr }

// Close stops listening and removes the address file if it still holds
// this server's address. It is safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		err = s.ln.Close()
		if s.cfg.File != "" {
			removeAddressFile(s.cfg.File, s.addr)
		}
	})
	return err
}

// arrival is a connection's hello, or why it is not one.
type arrival struct {
	conn  net.Conn
	hello hello
	err   error
}

// serving is the state of one Serve call that its goroutines share.
type serving struct {
	s        *Server
	deadline time.Time
	arrivals chan arrival
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	pending  map[net.Conn]struct{}
}

// Serve waits for a hello from every rank but 0, checks them, and sends
// every rank p; it returns once every rank has been sent its answer. When
// a hello disagrees with rank 0's configuration, or Timeout passes before
// every rank joined, every rank that joined is sent a refusal and Serve
// returns an *Error (ReasonMismatch, ReasonTimeout with Missing, or
// ReasonCanceled when ctx is canceled). Serve closes the server, and runs
// once.
func (s *Server) Serve(ctx context.Context, p Payload) error {
	if s.served.Swap(true) {
		return &Error{Rank: 0, Addr: s.addr, Reason: ReasonConfig, Msg: "Serve was called again", Fix: "Listen anew for another rendezvous"}
	}
	defer s.Close()
	world := s.cfg.WorldSize
	if world == 1 {
		return nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	st := &serving{s: s, arrivals: make(chan arrival), done: make(chan struct{}), pending: map[net.Conn]struct{}{}}
	st.deadline, _ = ctx.Deadline()
	stop := context.AfterFunc(ctx, func() { _ = s.ln.Close() })
	defer stop()
	st.wg.Add(1)
	go st.accept()
	defer st.finish()

	joined := map[int]net.Conn{}
	var strays []string
	for len(joined) < world-1 {
		select {
		case a := <-st.arrivals:
			if a.err != nil {
				strays = append(strays, a.err.Error())
				continue
			}
			if msg, fix := s.checkHello(a, joined); msg != "" {
				refuse(a.conn, msg+". Fix: "+fix, s.cfg.IOTimeout)
				_ = a.conn.Close()
				st.refuseAll(joined, msg+". Fix: "+fix)
				return &Error{Rank: 0, Addr: s.addr, Reason: ReasonMismatch, Msg: msg, Fix: fix}
			}
			joined[int(a.hello.rank)] = a.conn
		case <-ctx.Done():
			var missing []int
			for r := 1; r < world; r++ {
				if _, ok := joined[r]; !ok {
					missing = append(missing, r)
				}
			}
			msg := fmt.Sprintf("%s %s of %d did not join within %v", plural(len(missing)), formatRanks(missing), world, time.Since(start).Round(time.Millisecond))
			if len(strays) > 0 {
				msg += fmt.Sprintf("; %d connection(s) that were not ranks were refused, the first: %s", len(strays), strays[0])
			}
			st.refuseAll(joined, fmt.Sprintf("rank 0 at %s gave up: %s. Fix: %s", s.addr, msg, fixStart))
			e := &Error{Rank: 0, Addr: s.addr, Reason: ReasonTimeout, Missing: missing, Msg: msg, Fix: fixStart}
			if errors.Is(context.Cause(ctx), context.Canceled) {
				e.Reason, e.Err, e.Fix = ReasonCanceled, context.Cause(ctx), "none needed if the cancellation was meant; otherwise "+fixStart
			}
			return e
		}
	}
	_ = s.ln.Close()
	msg := appendAccepted(nil, p)
	var failed []int
	for _, r := range slices.Sorted(maps.Keys(joined)) {
		c := joined[r]
		_ = c.SetWriteDeadline(time.Now().Add(s.cfg.IOTimeout))
		if _, err := c.Write(msg); err != nil {
			failed = append(failed, r)
		}
		_ = c.Close()
	}
	if len(failed) > 0 {
		return &Error{Rank: 0, Addr: s.addr, Reason: ReasonNetwork, Missing: failed,
			Msg: fmt.Sprintf("every rank joined, but the payload could not be sent to %s %s", plural(len(failed)), formatRanks(failed)),
			Fix: "check those ranks' own errors: a rank that gave up waiting for rank 0 closes its connection"}
	}
	return nil
}

// checkHello returns why rank 0 refuses a's hello and what to do, or ""
// when it accepts it.
func (s *Server) checkHello(a arrival, joined map[int]net.Conn) (msg, fix string) {
	h, world := a.hello, s.cfg.WorldSize
	switch {
	case int64(h.world) != int64(world):
		return fmt.Sprintf("rank %d was started with a world of %d ranks, rank 0 with %d", h.rank, h.world, world), fixWorld
	case h.rank == 0 || int64(h.rank) >= int64(world):
		return fmt.Sprintf("a rank joined as rank %d, outside 1..%d (rank 0 is the process that listens)", h.rank, world-1), fixRanks
	case joined[int(h.rank)] != nil:
		return fmt.Sprintf("rank %d joined twice, from %s and from %s", h.rank, joined[int(h.rank)].RemoteAddr(), a.conn.RemoteAddr()), fixRanks
	case h.key != s.cfg.DeviceKey:
		return fmt.Sprintf("rank %d's device key %q differs from rank 0's %q", h.rank, h.key, s.cfg.DeviceKey), fixKey
	}
	return "", ""
}

// accept hands every new connection to a handshake goroutine, at most
// maxPending at once, until the listener closes.
func (st *serving) accept() {
	defer st.wg.Done()
	for {
		c, err := st.s.ln.Accept()
		if err != nil {
			return
		}
		st.mu.Lock()
		full := len(st.pending) >= maxPending
		if !full {
			st.pending[c] = struct{}{}
		}
		st.mu.Unlock()
		if full {
			_ = c.Close()
			continue
		}
		st.wg.Add(1)
		go st.handshake(c)
	}
}

// handshake reads c's hello within IOTimeout. A connection that sends no
// valid hello is refused and closed here; either way Serve learns of it.
func (st *serving) handshake(c net.Conn) {
	defer st.wg.Done()
	_ = c.SetReadDeadline(earlier(time.Now().Add(st.s.cfg.IOTimeout), st.deadline))
	h, err := readHello(c)
	if err != nil {
		err = st.stray(c, err)
	}
	st.mu.Lock()
	delete(st.pending, c)
	st.mu.Unlock()
	select {
	case st.arrivals <- arrival{conn: c, hello: h, err: err}:
	case <-st.done:
		_ = c.Close()
	}
}

// stray refuses and closes a connection that sent no valid hello, and
// returns what it did wrong.
func (st *serving) stray(c net.Conn, err error) error {
	from := c.RemoteAddr().String()
	var we *wireError
	if errors.As(err, &we) && !we.closed {
		refuse(c, fmt.Sprintf("rank 0 at %s refused the connection from %s: %s. Fix: %s", st.s.addr, from, we.msg, fixProtocol), st.s.cfg.IOTimeout)
		linger(c, st.s.cfg.IOTimeout)
	}
	_ = c.Close()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%s sent no complete hello in time", from)
	}
	return fmt.Errorf("%s: %v", from, err)
}

// refuseAll sends every rank that joined the refusal msg and closes its
// connection.
func (st *serving) refuseAll(joined map[int]net.Conn, msg string) {
	for _, c := range joined {
		refuse(c, msg, st.s.cfg.IOTimeout)
		_ = c.Close()
	}
}

// finish stops the accept and handshake goroutines and waits for them.
func (st *serving) finish() {
	close(st.done)
	_ = st.s.ln.Close()
	st.mu.Lock()
	for c := range st.pending {
		_ = c.Close()
	}
	st.mu.Unlock()
	st.wg.Wait()
}

// refuse writes a refusal to c, within timeout.
func refuse(c net.Conn, msg string, timeout time.Duration) {
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	_, _ = c.Write(appendRefused(nil, msg))
}

// linger half-closes c and reads what the peer still sends (at most 64
// KiB, within timeout or 100 ms), so that closing c does not reset the
// connection before the peer has read the refusal.
func linger(c net.Conn, timeout time.Duration) {
	type closeWriter interface{ CloseWrite() error }
	if cw, ok := c.(closeWriter); ok {
		_ = cw.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(min(timeout, 100*time.Millisecond)))
	var buf [4096]byte
	for n := 0; n < 64<<10; {
		k, err := c.Read(buf[:])
		n += k
		if err != nil {
			return
		}
	}
}

// earlier returns the earlier of a and b, ignoring a zero b.
func earlier(a, b time.Time) time.Time {
	if !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// Join is the side of every rank but 0: it connects to rank 0 (at
// cfg.Address, or the address in cfg.File, retrying until Timeout), sends
// its hello and returns the payload rank 0 answers with. A refusal from
// rank 0 is returned as an *Error with ReasonRefused and rank 0's reason.
func Join(ctx context.Context, cfg Config) (Payload, error) {
	cfg = cfg.withDefaults()
	if cfg.Rank == 0 {
		return Payload{}, &Error{Rank: 0, Reason: ReasonConfig, Msg: "rank 0 does not join, it listens", Fix: "call Listen and Serve on rank 0 (or Exchange on every rank)"}
	}
	if err := cfg.check(); err != nil {
		return Payload{}, err
	}
	c, addr, err := dial(ctx, cfg)
	if err != nil {
		return Payload{}, err
	}
	defer c.Close()
	connected := time.Now()
	fail := func(reason Reason, err error, msg, fix string) (Payload, error) {
		if errors.Is(context.Cause(ctx), context.Canceled) {
			reason, err, fix = ReasonCanceled, context.Cause(ctx), "none needed if the cancellation was meant"
		}
		return Payload{}, &Error{Rank: cfg.Rank, Addr: addr, Reason: reason, Msg: msg, Err: err, Fix: fix}
	}
	answerBy := time.Now().Add(cfg.Timeout + cfg.IOTimeout)
	if d, ok := ctx.Deadline(); ok {
		answerBy = earlier(answerBy, d)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = c.SetWriteDeadline(earlier(time.Now().Add(cfg.IOTimeout), answerBy))
	if _, err := c.Write(appendHello(nil, hello{rank: uint32(cfg.Rank), world: uint32(cfg.WorldSize), key: cfg.DeviceKey})); err != nil {
		return fail(ReasonNetwork, err, "could not send its hello", "check that rank 0 is running and reachable")
	}
	_ = c.SetReadDeadline(answerBy)
	p, refusal, refused, err := readAnswer(c)
	var we *wireError
	var ne net.Error
	switch {
	case errors.As(err, &we) && we.closed:
		return fail(ReasonNetwork, nil, "rank 0 closed the connection before it answered", "check rank 0's own error")
	case errors.As(err, &we):
		return fail(ReasonProtocol, nil, "rank 0's answer is not a rendezvous answer: "+we.msg, fixProtocol)
	case errors.As(err, &ne) && ne.Timeout():
		return fail(ReasonTimeout, nil, fmt.Sprintf("rank 0 accepted the connection but sent no answer within %v", time.Since(connected).Round(time.Millisecond)), fixStart)
	case err != nil:
		return fail(ReasonNetwork, err, "the connection failed before rank 0 answered", "check rank 0's own error")
	case refused:
		return Payload{}, &Error{Rank: cfg.Rank, Addr: addr, Reason: ReasonRefused, Msg: "refused: " + refusal}
	}
	return p, nil
}

// dial connects to rank 0 within cfg.Timeout, re-reading the address file
// before every attempt, so a rank may start before rank 0 does.
func dial(ctx context.Context, cfg Config) (net.Conn, string, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	addr, backoff := cfg.Address, 5*time.Millisecond
	var last error
	for {
		a := cfg.Address
		if a == "" {
			var err error
			if a, err = readAddressFile(cfg.File); err != nil {
				last = err
			}
		}
		if a != "" {
			addr = a
			d := net.Dialer{Timeout: cfg.IOTimeout}
			c, err := d.DialContext(ctx, "tcp", a)
			if err == nil {
				return c, a, nil
			}
			last = err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			e := &Error{Rank: cfg.Rank, Addr: addr, Reason: ReasonUnreachable, Err: last,
				Msg: fmt.Sprintf("could not reach rank 0 within %v", time.Since(start).Round(time.Millisecond)),
				Fix: "start rank 0, and give every rank rank 0's address (" + AddressEnv + ") or the file it writes (" + FileEnv + ")"}
			if addr == "" {
				e.Addr = cfg.File
				e.Msg = fmt.Sprintf("the address file did not name rank 0's address within %v", time.Since(start).Round(time.Millisecond))
			}
			if errors.Is(context.Cause(ctx), context.Canceled) {
				e.Reason, e.Err, e.Fix = ReasonCanceled, context.Cause(ctx), "none needed if the cancellation was meant"
			}
			return nil, addr, e
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// Exchange runs cfg.Rank's side of the rendezvous: rank 0 calls
// newPayload, listens and serves its result; every other rank joins. Every
// rank returns the same payload, or an error.
func Exchange(ctx context.Context, cfg Config, newPayload func() (Payload, error)) (Payload, error) {
	if cfg.Rank != 0 {
		return Join(ctx, cfg)
	}
	if err := cfg.withDefaults().check(); err != nil {
		return Payload{}, err
	}
	p, err := newPayload()
	if err != nil || cfg.WorldSize == 1 {
		return p, err
	}
	s, err := Listen(cfg)
	if err != nil {
		return Payload{}, err
	}
	if err := s.Serve(ctx, p); err != nil {
		return Payload{}, err
	}
	return p, nil
}
