package main

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// writeReport writes a command's report document as json or yaml, with
// the same field names either way (yaml is converted from the JSON).
func writeReport(w io.Writer, format string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	switch format {
	case formatJSON:
		data = append(data, '\n')
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
