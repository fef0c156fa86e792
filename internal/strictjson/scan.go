package strictjson

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner reads JSON tokens from a byte slice. It never copies the input:
// a string's bytes are a sub-slice of data unless they hold escapes.
type scanner struct {
	data []byte
	pos  int
}

// syntaxError describes malformed JSON at byte offset off as the line and
// column a reader finds it at.
type syntaxError struct {
	off int
	msg string
	eof bool
}

func (s *scanner) fail(msg string) *syntaxError {
	return &syntaxError{off: s.pos, msg: msg, eof: s.pos >= len(s.data)}
}

// lineCol returns the 1-based line and column (in bytes) of offset off.
func lineCol(data []byte, off int) (int, int) {
	line, start := 1, 0
	for i := 0; i < off && i < len(data); i++ {
		if data[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, off - start + 1
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end of the input.
func (s *scanner) peek() byte {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// expect consumes byte c after optional space.
func (s *scanner) expect(c byte, what string) error {
	if s.peek() != c {
		return s.unexpected(what)
	}
	s.pos++
	return nil
}

func (s *scanner) unexpected(what string) *syntaxError {
	if s.pos >= len(s.data) {
		return s.fail("the input ends where " + what + " was expected")
	}
	return s.fail(fmt.Sprintf("found %s where %s was expected", describeByte(s.data[s.pos]), what))
}

func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// literal consumes the keyword lit (true, false or null).
func (s *scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.unexpected("a JSON value")
	}
	s.pos += len(lit)
	return nil
}

// number consumes a JSON number and returns its text.
func (s *scanner) number() ([]byte, error) {
	start := s.pos
	if s.at('-') {
		s.pos++
	}
	switch {
	case s.at('0'):
		s.pos++
	case s.digit():
		s.digits()
	default:
		return nil, s.unexpected("a digit")
	}
	if s.at('.') {
		s.pos++
		if !s.digit() {
			return nil, s.unexpected("a digit after the decimal point")
		}
		s.digits()
	}
	if s.at('e') || s.at('E') {
		s.pos++
		if s.at('+') || s.at('-') {
			s.pos++
		}
		if !s.digit() {
			return nil, s.unexpected("a digit in the exponent")
		}
		s.digits()
	}
	return s.data[start:s.pos], nil
}

func (s *scanner) at(c byte) bool { return s.pos < len(s.data) && s.data[s.pos] == c }

func (s *scanner) digit() bool {
	return s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9'
}

func (s *scanner) digits() {
	for s.digit() {
		s.pos++
	}
}

// str consumes a JSON string (the opening quote is next) and returns its
// decoded bytes. Without escapes the result aliases the input.
func (s *scanner) str() ([]byte, error) {
	if !s.at('"') {
		return nil, s.unexpected("a string")
	}
	s.pos++
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.data[start : s.pos-1], nil
		case c == '\\':
			return s.escapedStr(start)
		case c < 0x20:
			return nil, s.fail(fmt.Sprintf("a string holds the control character 0x%02x", c))
		}
		s.pos++
	}
	return nil, s.fail("the input ends inside a string")
}

// escapedStr finishes a string from its first backslash, decoding escapes
// into a new buffer; start is the offset of the string's first byte.
func (s *scanner) escapedStr(start int) ([]byte, error) {
	out := append([]byte(nil), s.data[start:s.pos]...)
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return out, nil
		case c < 0x20:
			return nil, s.fail(fmt.Sprintf("a string holds the control character 0x%02x", c))
		case c != '\\':
			out = append(out, c)
			s.pos++
			continue
		}
		var err error
		if out, err = s.escape(out); err != nil {
			return nil, err
		}
	}
	return nil, s.fail("the input ends inside a string")
}

// escape decodes one backslash escape at s.pos and appends it to out.
func (s *scanner) escape(out []byte) ([]byte, error) {
	s.pos++ // the backslash
	if s.pos >= len(s.data) {
		return nil, s.fail("the input ends inside a string")
	}
	c := s.data[s.pos]
	s.pos++
	switch c {
	case '"', '\\', '/':
		return append(out, c), nil
	case 'b':
		return append(out, '\b'), nil
	case 'f':
		return append(out, '\f'), nil
	case 'n':
		return append(out, '\n'), nil
	case 'r':
		return append(out, '\r'), nil
	case 't':
		return append(out, '\t'), nil
	case 'u':
		r, err := s.hex4()
		if err != nil {
			return nil, err
		}
		if utf16.IsSurrogate(r) {
			r = s.lowSurrogate(r)
		}
		return utf8.AppendRune(out, r), nil
	}
	s.pos--
	return nil, s.fail(fmt.Sprintf("%s is not a valid escape after a backslash", describeByte(c)))
}

// lowSurrogate completes a UTF-16 surrogate pair when one follows, and
// otherwise yields U+FFFD as encoding/json does.
func (s *scanner) lowSurrogate(hi rune) rune {
	if len(s.data)-s.pos >= 6 && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
		save := s.pos
		s.pos += 2
		if lo, err := s.hex4(); err == nil {
			if r := utf16.DecodeRune(hi, lo); r != utf8.RuneError {
				return r
			}
		}
		s.pos = save
	}
	return utf8.RuneError
}

func (s *scanner) hex4() (rune, error) {
	if len(s.data)-s.pos < 4 {
		return 0, s.fail("a \\u escape needs four hex digits")
	}
	v, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 32)
	if err != nil {
		return 0, s.fail("a \\u escape needs four hex digits")
	}
	s.pos += 4
	return rune(v), nil
}
