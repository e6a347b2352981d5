package main

import (
	"fmt"
	"io"
)

// emit writes a command's document to file, or to stdout when file is
// empty or "-". A file is written whole or not at all; wrote, when set,
// is said on stderr after it: "wrote FILE: WHAT".
func emit(stdout, stderr io.Writer, file string, data []byte, wrote string) error {
	if file == "" || file == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if err := writeFileAtomic(file, data); err != nil {
		return err
	}
	if wrote != "" {
		fmt.Fprintf(stderr, "wrote %s: %s\n", file, wrote)
	}
	return nil
}
