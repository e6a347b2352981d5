package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// WriteReport writes a command's report document as json or yaml, with
// the same field names either way (yaml is converted from the JSON): the
// one writer of every command's json and yaml.
func WriteReport(w io.Writer, format string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteJSONAs(w, format, append(data, '\n'))
}

// WriteJSONAs writes a JSON document as it is (json) or as yaml.
func WriteJSONAs(w io.Writer, format string, data []byte) error {
	var err error
	switch format {
	case FormatJSON:
	case FormatYAML:
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	default:
		return fmt.Errorf("no %s report: this is a bug in accelc", format)
	}
	_, err = w.Write(data)
	return err
}
