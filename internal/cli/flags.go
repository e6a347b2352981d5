package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/artifact"
)

// Output formats, one set of names for every command that prints a
// report: text for people (a table where the report is one), json and
// yaml for programs, csv for spreadsheets.
const (
	FormatText = "text"
	FormatJSON = "json"
	FormatYAML = "yaml"
	FormatCSV  = "csv"
)

// Choice is a flag that takes one of a fixed set of values and refuses
// any other as it is set, so a wrong value is a usage error (exit 2)
// before the command runs, and completion offers the set.
type Choice struct {
	value   string
	allowed []string
	// aliases map names earlier versions took to their value now.
	aliases map[string]string
}

// Value is the value set, or the default.
func (c *Choice) Value() string { return c.value }

func (c *Choice) String() string { return c.value }
func (c *Choice) Type() string   { return "string" }
func (c *Choice) Set(s string) error {
	if to, ok := c.aliases[s]; ok {
		s = to
	}
	if !slices.Contains(c.allowed, s) {
		return fmt.Errorf("choose one of %s", strings.Join(c.allowed, ", "))
	}
	c.value = s
	return nil
}

// OneOf is a Choice of allowed values, def until set.
func OneOf(def string, allowed ...string) *Choice {
	return &Choice{value: def, allowed: allowed}
}

// OutputFlag is -o/--output, the format of a command's report, on every
// command: text by default, and "table", its name in earlier versions,
// still means text.
//
// render, inventory snapshot, inventory suggest and inventory nvml took a
// path there before; they take it as --output-dir or --out-file now, and
// for one release still take -o PATH, with a note. A value is a format
// when it is one of the names -o takes on any command (text, json, yaml,
// csv, table), even where this command does not take it; any other value
// is a path. A path named like a format goes to --output-dir or
// --out-file.
type OutputFlag struct {
	Choice
	// pathFlag is the flag that takes the path -o took before; empty
	// where -o never took one.
	pathFlag string
	// path is the deprecated -o PATH.
	path string
}

// formatNames are every format -o takes on some command.
var formatNames = []string{FormatText, FormatJSON, FormatYAML, FormatCSV, "table"}

// OutputFormats is -o/--output with these formats, the first the default.
func OutputFormats(formats ...string) *OutputFlag {
	o := &OutputFlag{Choice: *OneOf(formats[0], formats...)}
	o.aliases = map[string]string{"table": FormatText}
	return o
}

// orPath lets -o take the path that flag takes now, deprecated.
func (o *OutputFlag) OrPath(flag string) *OutputFlag {
	o.pathFlag = flag
	return o
}

func (o *OutputFlag) Set(s string) error {
	if o.pathFlag != "" && !slices.Contains(formatNames, s) {
		o.path = s
		return nil
	}
	return o.Choice.Set(s)
}

func (o *OutputFlag) String() string {
	if o.path != "" {
		return o.path
	}
	return o.value
}

// movePath moves a deprecated -o PATH to its flag, whose value is to,
// with a note on stderr; both at once is a usage error.
func (o *OutputFlag) MovePath(stderr io.Writer, to *string) error {
	if o.path == "" {
		return nil
	}
	if *to != "" {
		return UsageErr("-o %s and --%s %s both name where to write: give --%s alone", o.path, o.pathFlag, *to, o.pathFlag)
	}
	fmt.Fprintf(stderr, "warning: -o PATH is deprecated: use --%s %s (-o takes a format now: %s)\n", o.pathFlag, o.path, strings.Join(o.allowed, ", "))
	*to = o.path
	return nil
}

// register adds -o/--output to cmd with its completion.
func (o *OutputFlag) Register(cmd *cobra.Command) {
	usage := "output format: " + strings.Join(o.allowed, "|")
	if o.pathFlag != "" {
		usage += " (-o PATH is deprecated: use --" + o.pathFlag + ")"
	}
	cmd.Flags().VarP(o, "output", "o", usage)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(o.allowed, cobra.ShellCompDirectiveNoFileComp))
}

// register adds c to cmd as the flag name (shorthand short, may be empty)
// with its completion.
func (c *Choice) Register(cmd *cobra.Command, name, short, usage string) {
	cmd.Flags().VarP(c, name, short, usage+": "+strings.Join(c.allowed, "|"))
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(c.allowed, cobra.ShellCompDirectiveNoFileComp))
}

// ByteSize is a flag that takes a size with a unit: 256MiB, 1GiB.
type ByteSize int64

func (b *ByteSize) String() string { return artifact.FormatSize(int64(*b)) }
func (b *ByteSize) Type() string   { return "size" }
func (b *ByteSize) Set(s string) error {
	n, err := artifact.ParseSize(s)
	if err != nil {
		return errors.New("write a size such as 256MiB or 1GiB")
	}
	if n <= 0 {
		return errors.New("give a size above 0")
	}
	*b = ByteSize(n)
	return nil
}
