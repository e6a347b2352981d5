package main

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// writeReport writes a command's report document as json or yaml, with
// the same field names either way (yaml is converted from the JSON): the
// one writer of every command's json and yaml.
func writeReport(w io.Writer, format string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeJSONAs(w, format, append(data, '\n'))
}

// writeJSONAs writes a JSON document as it is (json) or as yaml.
func writeJSONAs(w io.Writer, format string, data []byte) error {
	var err error
	switch format {
	case formatJSON:
	case formatYAML:
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	default:
		return fmt.Errorf("no %s report: this is a bug in accelc", format)
	}
	_, err = w.Write(data)
	return err
}

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
