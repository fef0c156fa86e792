package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/strictjson"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// env carries the process's streams to a subcommand. Subcommands never touch
// os.Stdout or os.Stderr directly, so every one is testable through run.
type env struct {
	stdout io.Writer
	stderr io.Writer
	stdin  io.Reader
	// inputLimit is the most bytes one input file may hold
	// (--max-input-bytes).
	inputLimit int64
	// ctx, when set, ends long-running commands (serve) in place of
	// SIGINT and SIGTERM.
	ctx context.Context
	// child, when set, makes the command of a child gpuplan process (gpuplan
	// run's search for a faulting wave) in place of this executable.
	child func(ctx context.Context, args []string) (*exec.Cmd, error)
	// lookupEnv, when set, reads the environment in place of
	// os.LookupEnv (tests: the ranks of bench frontier --processes run as
	// goroutines, each with an environment of its own).
	lookupEnv func(key string) (string, bool)
}

// lookup reads key from the environment (e.lookupEnv or the process's).
func (e *env) lookup(key string) (string, bool) {
	if e.lookupEnv != nil {
		return e.lookupEnv(key)
	}
	return os.LookupEnv(key)
}

// command is one gpuplan subcommand.
type command struct {
	name    string
	summary string
	run     func(e *env, args []string) error
}

// usageError is a bad invocation: exit status 2 and a pointer to --help.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelpShown signals that --help was printed; the command exits 0.
var errHelpShown = errors.New("help shown")

// flags wraps a flag.FlagSet with the options every subcommand shares.
type flags struct {
	*flag.FlagSet
	json bool
	out  io.Writer
	help func()
	env  *env
}

// newFlags returns a flag set for subcommand name. synopsis is the usage
// line(s) after "gpuplan"; about is the help text printed under it.
func (e *env) newFlags(name, synopsis, about string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	f := &flags{FlagSet: fs, out: e.stdout, env: e}
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.json, "json", false, "write machine-readable JSON instead of text")
	// The flag package calls fs.Usage on every parse error; parse prints the
	// help itself, only for --help, so the hook stays silent.
	fs.Usage = func() {}
	f.help = func() {
		fmt.Fprintf(f.out, "usage: gpuplan %s\n\n%s\n\nflags:\n", synopsis, strings.TrimSpace(about))
		fs.SetOutput(f.out)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return f
}

// parse parses args. Flags may come before or after the positional
// arguments ("gpuplan batch in.json --json"); everything after "--" is
// positional. --help prints usage to stdout and returns errHelpShown; any
// other problem is a *usageError naming the subcommand.
func (f *flags) parse(args []string) error {
	var positional []string
	err := f.Parse(args)
	for err == nil && f.NArg() > 0 {
		rest := f.Args()
		if rest[0] == "--" {
			positional = append(positional, rest[1:]...)
			break
		}
		positional = append(positional, rest[0])
		err = f.Parse(rest[1:])
	}
	if err == nil {
		// Leave exactly the positional arguments in f.Args().
		err = f.Parse(append([]string{"--"}, positional...))
	}
	switch {
	case err == nil:
		return f.checkInputLimit()
	case errors.Is(err, flag.ErrHelp):
		f.help()
		return errHelpShown
	default:
		msg, fixed := flagErrorText(err.Error())
		if fixed {
			return usagef("gpuplan %s: %s", f.Name(), msg)
		}
		return usagef("gpuplan %s: %s. Fix: run 'gpuplan %s --help' for the flags and their values", f.Name(), msg, f.Name())
	}
}

// The parse errors of package flag that repeat the command line: a flag
// name, a whole argument, or a value and the error of its Set.
var (
	flagUndefined = regexp.MustCompile(`(?s)^flag provided but not defined: -(.*)$`)
	flagSyntax    = regexp.MustCompile(`(?s)^bad flag syntax: (.*)$`)
	flagNoValue   = regexp.MustCompile(`(?s)^flag needs an argument: -(.*)$`)
	flagBadValue  = regexp.MustCompile(`(?s)^invalid (boolean )?value ("(?:[^"\\]|\\.)*") (for (?:flag )?)-(\S+): (.*)$`)
)

// flagErrorText rewrites a parse error of package flag so that what it
// repeats of the command line is quoted when it is not plain text and cut
// to quote.MaxEcho: an undefined flag's name can hold an escape sequence
// and a value can be megabytes long. fixed reports that the message
// already ends in the Fix of a flag's own Set, which then stands alone.
func flagErrorText(msg string) (text string, fixed bool) {
	if m := flagUndefined.FindStringSubmatch(msg); m != nil {
		return "flag provided but not defined: -" + echoName(m[1]), false
	}
	if m := flagSyntax.FindStringSubmatch(msg); m != nil {
		return "bad flag syntax: " + echoName(m[1]), false
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return "flag needs an argument: -" + echoName(m[1]), false
	}
	m := flagBadValue.FindStringSubmatch(msg)
	if m == nil {
		return echoName(msg), false
	}
	value, err := strconv.Unquote(m[2])
	if err != nil {
		value = m[2]
	}
	name, reason := m[4], m[5]
	if strings.Contains(reason, "Fix:") {
		return "--" + name + ": " + reason, true
	}
	return fmt.Sprintf("invalid %svalue %s %s-%s: %s", m[1], quote.Echo(value), m[3], name, reason), false
}

// echoName returns s as a message repeats a name or path from the command
// line where it stands bare, as package flag and the operating system
// print one ("flag provided but not defined: -name", "writing out.csv:
// ..."): unchanged when it is plain text (quote.Plain) of at most
// quote.MaxEcho bytes, else as quote.Echo gives it, quoted and cut.
func echoName(s string) string {
	if quote.Plain(s) && len(s) <= quote.MaxEcho {
		return s
	}
	return quote.Echo(s)
}

// maxInputFlag names the flag that bounds the size of every input file.
const maxInputFlag = "max-input-bytes"

// readsInput adds --max-input-bytes to a command that reads files.
func (f *flags) readsInput() {
	if f.Lookup(maxInputFlag) == nil {
		f.Int64Var(&f.env.inputLimit, maxInputFlag, input.DefaultJSONLimit, "refuse an input file (JSON or CSV) larger than `N` bytes")
	}
}

// checkInputLimit refuses a --max-input-bytes that is not positive, whichever
// variable the command bound the flag to.
func (f *flags) checkInputLimit() error {
	fl := f.Lookup(maxInputFlag)
	if fl == nil {
		return nil
	}
	if g, ok := fl.Value.(flag.Getter); ok {
		if v, ok := g.Get().(int64); ok && v > 0 {
			return nil
		}
	}
	return usagef("gpuplan %s: --%s %s is not a positive number of bytes. Fix: give the largest input size to accept in bytes, for example %d (256 MiB, the default)",
		f.Name(), maxInputFlag, fl.Value.String(), input.DefaultJSONLimit)
}

// noArgs fails with a usage error when positional arguments remain.
func (f *flags) noArgs() error {
	if f.NArg() > 0 {
		return usagef("gpuplan %s: unexpected argument %q. Fix: drop it, or run 'gpuplan %s --help' for the usage", f.Name(), f.Arg(0), f.Name())
	}
	return nil
}

// setFlags returns the names of the flags given on the command line.
func setFlags(f *flags) map[string]bool {
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// readInput reads a named file, or standard input when name is "-", under
// the size limit of --max-input-bytes. It refuses anything that is not a
// regular file (a FIFO would block, a device such as /dev/zero never
// ends). It also returns the name messages use for the input: the file
// name, or "<stdin>".
func (e *env) readInput(name string) (data []byte, source string, err error) {
	source = name
	if name == input.Stdin {
		if e.stdin == nil {
			return nil, "", errors.New("standard input is not available. Fix: pass a file name")
		}
		source = "<stdin>"
	}
	limit := e.inputLimit
	if limit <= 0 {
		limit = input.DefaultJSONLimit
	}
	data, err = input.ReadFile(name, e.stdin, limit)
	var tooLarge *input.TooLargeError
	if errors.As(err, &tooLarge) {
		size := fmt.Sprintf("more than %d", tooLarge.Limit)
		if tooLarge.Size >= 0 {
			size = fmt.Sprint(tooLarge.Size)
		}
		return nil, "", fmt.Errorf("%s: input is %s bytes, above the limit of %d bytes. Fix: check that this is the intended file, or raise the limit with --%s",
			quote.Text(source), size, tooLarge.Limit, maxInputFlag)
	}
	if err != nil {
		return nil, "", err
	}
	return data, source, nil
}

// run executes gpuplan with args (without the program name) and returns the
// process exit status.
func run(stdout, stderr io.Writer, args []string) int {
	return runWithInput(stdout, stderr, os.Stdin, args)
}

func runWithInput(stdout, stderr io.Writer, stdin io.Reader, args []string) int {
	e := &env{stdout: stdout, stderr: stderr, stdin: stdin, inputLimit: input.DefaultJSONLimit}
	cmds := commands()
	if len(args) == 0 {
		printHelp(stderr, cmds)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return runCommand(e, cmds, args[1], []string{"--help"})
		}
		printHelp(stdout, cmds)
		return exitOK
	case "--version", "-version":
		return runCommand(e, cmds, "version", args[1:])
	}
	return runCommand(e, cmds, name, args[1:])
}

func runCommand(e *env, cmds []command, name string, args []string) int {
	for _, c := range cmds {
		if c.name != name {
			continue
		}
		err := c.run(e, args)
		var ue *usageError
		switch {
		case err == nil, errors.Is(err, errHelpShown):
			return exitOK
		case errors.As(err, &ue):
			fmt.Fprintln(e.stderr, boundedMessage(err.Error()))
			return exitUsage
		default:
			fmt.Fprintf(e.stderr, "gpuplan %s: %s\n", name, boundedMessage(err.Error()))
			return exitFailure
		}
	}
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	sort.Strings(names)
	fmt.Fprintf(e.stderr, "gpuplan: unknown command %s; known commands: %s. Fix: use one of the known commands ('gpuplan help' describes them)\n", quote.Echo(name), strings.Join(names, ", "))
	return exitUsage
}

// Bounds of a printed error: a message that echoes megabytes of input
// keeps its head (what failed, where) and its tail (the Fix).
const (
	maxMessageBytes  = 4096
	messageHeadBytes = 2048
	messageTailBytes = 1024
)

// boundedMessage cuts a message longer than maxMessageBytes in its
// middle, on UTF-8 boundaries, saying how much it left out.
func boundedMessage(msg string) string {
	if len(msg) <= maxMessageBytes {
		return msg
	}
	head, tail := messageHeadBytes, len(msg)-messageTailBytes
	for head > 0 && !utf8.RuneStart(msg[head]) {
		head--
	}
	for tail < len(msg) && !utf8.RuneStart(msg[tail]) {
		tail++
	}
	return fmt.Sprintf("%s ... [%d bytes left out] ... %s", msg[:head], tail-head, msg[tail:])
}

func printHelp(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "gpuplan plans GPU execution offline and proves its plans on NVIDIA hardware.")
	fmt.Fprintln(w, "\nusage: gpuplan <command> [flags]\n\ncommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEvery command accepts --help and --json; gpuplan --version says whether this build has CUDA.")
}

// The commands that plan from one JSON input (the planner commands fuse,
// queue, compact, batch, session, diagnostics and passes, and tokenfact and
// egraph)
// share one shape: `gpuplan <name> [--json] <input.json|->`. The input is one
// strict JSON object; every field is required unless its tag says omitempty,
// and a null counts as missing.

// jsonInput parses the flags of such a command and reads and decodes
// its one input argument into v. It returns the parsed flags, so the caller
// can honour --json, and the input's name for error messages.
func (e *env) jsonInput(name, about string, args []string, v any) (*flags, string, error) {
	f := e.newFlags(name, name+" [--json] <input.json|->", about)
	f.readsInput()
	if err := f.parse(args); err != nil {
		return nil, "", err
	}
	if f.NArg() != 1 {
		return nil, "", usagef("gpuplan %s: want one input file (or - for standard input), got %d arguments. Fix: pass one JSON input file or - ('gpuplan %s --help' shows the input format)", name, f.NArg(), name)
	}
	data, source, err := e.readInput(f.Arg(0))
	if err != nil {
		return nil, "", err
	}
	if err := decodeJSONInput(source, data, v); err != nil {
		return nil, "", err
	}
	return f, source, nil
}

// decodeJSONInput decodes data strictly into v (a pointer to a struct):
// every field without omitempty is required and not null, and so is every
// list element. A value rejected by an UnmarshalText method (host_sync,
// say) keeps its own fix.
func decodeJSONInput(source string, data []byte, v any) error {
	return strictjson.DecodeWith(source, data, v, strictjson.Options{Required: true})
}

// writePlan writes plan as JSON when f.json is set, and otherwise runs text.
func writePlan(w io.Writer, f *flags, plan any, text func(tw *tabwriter.Writer)) error {
	if f.json {
		return writeJSON(w, plan)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	text(tw)
	return tw.Flush()
}
