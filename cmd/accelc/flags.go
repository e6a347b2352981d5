package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/artifact"
)

// Output formats, one set of names for every command that prints a
// report: text for people (a table where the report is one), json and
// yaml for programs, csv for spreadsheets.
const (
	formatText = "text"
	formatJSON = "json"
	formatYAML = "yaml"
	formatCSV  = "csv"
)

// choice is a flag that takes one of a fixed set of values and refuses
// any other as it is set, so a wrong value is a usage error (exit 2)
// before the command runs, and completion offers the set.
type choice struct {
	value   string
	allowed []string
	// aliases map names earlier versions took to their value now.
	aliases map[string]string
}

func (c *choice) String() string { return c.value }
func (c *choice) Type() string   { return "string" }
func (c *choice) Set(s string) error {
	if to, ok := c.aliases[s]; ok {
		s = to
	}
	if !slices.Contains(c.allowed, s) {
		return fmt.Errorf("choose one of %s", strings.Join(c.allowed, ", "))
	}
	c.value = s
	return nil
}

// oneOf is a choice of allowed values, def until set.
func oneOf(def string, allowed ...string) *choice {
	return &choice{value: def, allowed: allowed}
}

// outputFormats is the choice of -o/--output, the format of a command's
// report: text by default, and "table", its name in earlier versions,
// still means text.
func outputFormats(formats ...string) *choice {
	c := oneOf(formatText, formats...)
	c.aliases = map[string]string{"table": formatText}
	return c
}

// register adds c to cmd as the flag name (shorthand short, may be empty)
// with its completion.
func (c *choice) register(cmd *cobra.Command, name, short, usage string) {
	cmd.Flags().VarP(c, name, short, usage+": "+strings.Join(c.allowed, "|"))
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(c.allowed, cobra.ShellCompDirectiveNoFileComp))
}

// byteSize is a flag that takes a size with a unit: 256MiB, 1GiB.
type byteSize int64

func (b *byteSize) String() string { return artifact.FormatSize(int64(*b)) }
func (b *byteSize) Type() string   { return "size" }
func (b *byteSize) Set(s string) error {
	n, err := artifact.ParseSize(s)
	if err != nil {
		return errors.New("write a size such as 256MiB or 1GiB")
	}
	if n <= 0 {
		return errors.New("give a size above 0")
	}
	*b = byteSize(n)
	return nil
}
