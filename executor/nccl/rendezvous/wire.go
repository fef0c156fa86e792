package rendezvous

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// The messages, all integers big-endian:
//
//	hello  (a joining rank to rank 0): magic[4] version:u16 rank:u32 world:u32 keyLen:u32 key[keyLen]
//	answer (rank 0 to a joining rank): magic[4] version:u16 status:u8, then
//	       status 0 (accepted): payload[PayloadSize]
//	       status 1 (refused):  msgLen:u32 msg[msgLen]
//
// A reader checks the magic, the version and every length against its bound
// before it reads further or allocates anything.
const (
	// Magic opens every message.
	Magic = "GPRV"
	// Version is the protocol version; rank 0 refuses any other.
	Version = 1
	// MaxKeyLen bounds a hello's device key, in bytes.
	MaxKeyLen = 256
	// MaxMessageLen bounds a refusal's text, in bytes.
	MaxMessageLen = 1024
	// MaxWorldSize bounds the number of ranks of one rendezvous.
	MaxWorldSize = 1 << 16
	// PayloadSize is the size of the payload rank 0 hands out: NCCL's
	// ncclUniqueId.
	PayloadSize = 128
)

const (
	helloHeaderLen  = 4 + 2 + 4 + 4 + 4
	answerHeaderLen = 4 + 2 + 1
	statusAccepted  = 0
	statusRefused   = 1
)

// Payload is the opaque value every rank receives from rank 0 (an NCCL
// unique id).
type Payload [PayloadSize]byte

// hello is what a joining rank tells rank 0.
type hello struct {
	rank, world uint32
	key         string
}

// wireError is a message that breaks the protocol; closed says that the
// peer closed the connection before the message was complete.
type wireError struct {
	msg    string
	closed bool
}

func (e *wireError) Error() string { return e.msg }

func wireErrf(format string, a ...any) error { return &wireError{msg: fmt.Sprintf(format, a...)} }

// appendHello appends h's encoding to b.
func appendHello(b []byte, h hello) []byte {
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, Version)
	b = binary.BigEndian.AppendUint32(b, h.rank)
	b = binary.BigEndian.AppendUint32(b, h.world)
	b = binary.BigEndian.AppendUint32(b, uint32(len(h.key)))
	return append(b, h.key...)
}

// checkHeader checks a message's magic and version.
func checkHeader(b []byte) error {
	if string(b[:4]) != Magic {
		return wireErrf("the message does not start with %q (it starts with %q), so the peer is not a gpuplan rank", Magic, b[:4])
	}
	if v := binary.BigEndian.Uint16(b[4:6]); v != Version {
		return wireErrf("the peer speaks rendezvous protocol version %d, this process version %d", v, Version)
	}
	return nil
}

// readHello reads one hello from r: the fixed header first, then the key
// once its length is known to be within MaxKeyLen.
func readHello(r io.Reader) (hello, error) {
	var hdr [helloHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return hello{}, readErr("hello", err)
	}
	if err := checkHeader(hdr[:]); err != nil {
		return hello{}, err
	}
	h := hello{rank: binary.BigEndian.Uint32(hdr[6:10]), world: binary.BigEndian.Uint32(hdr[10:14])}
	n := binary.BigEndian.Uint32(hdr[14:18])
	if n > MaxKeyLen {
		return hello{}, wireErrf("the hello's device key is %d bytes, more than the %d allowed", n, MaxKeyLen)
	}
	key := make([]byte, n)
	if _, err := io.ReadFull(r, key); err != nil {
		return hello{}, readErr("hello's device key", err)
	}
	h.key = string(key)
	return h, nil
}

// parseHello decodes a hello that b holds exactly.
func parseHello(b []byte) (hello, error) {
	r := bytes.NewReader(b)
	h, err := readHello(r)
	if err == nil && r.Len() > 0 {
		return hello{}, wireErrf("the hello is followed by %d more bytes", r.Len())
	}
	return h, err
}

// readErr describes a failed read of a message part.
func readErr(what string, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &wireError{msg: fmt.Sprintf("the peer closed the connection before the %s was complete", what), closed: true}
	}
	return err
}

// appendAccepted appends an answer that hands out p.
func appendAccepted(b []byte, p Payload) []byte {
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, Version)
	b = append(b, statusAccepted)
	return append(b, p[:]...)
}

// appendRefused appends an answer that refuses with msg, cut to
// MaxMessageLen bytes.
func appendRefused(b []byte, msg string) []byte {
	if len(msg) > MaxMessageLen {
		msg = msg[:MaxMessageLen]
	}
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, Version)
	b = append(b, statusRefused)
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	return append(b, msg...)
}

// readAnswer reads rank 0's answer: the payload, or the refusal's text
// with refused true.
func readAnswer(r io.Reader) (p Payload, refusal string, refused bool, err error) {
	var hdr [answerHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return p, "", false, readErr("answer", err)
	}
	if err := checkHeader(hdr[:]); err != nil {
		return p, "", false, err
	}
	switch hdr[6] {
	case statusAccepted:
		if _, err := io.ReadFull(r, p[:]); err != nil {
			return p, "", false, readErr("payload", err)
		}
		return p, "", false, nil
	case statusRefused:
		var nb [4]byte
		if _, err := io.ReadFull(r, nb[:]); err != nil {
			return p, "", false, readErr("refusal", err)
		}
		n := binary.BigEndian.Uint32(nb[:])
		if n > MaxMessageLen {
			return p, "", false, wireErrf("the refusal is %d bytes, more than the %d allowed", n, MaxMessageLen)
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(r, msg); err != nil {
			return p, "", false, readErr("refusal", err)
		}
		return p, string(msg), true, nil
	default:
		return p, "", false, wireErrf("the answer has status %d, neither accepted (0) nor refused (1)", hdr[6])
	}
}
