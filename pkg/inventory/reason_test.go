package inventory

import (
	"strings"
	"testing"
)

// An unreadable node is reported in accelc's words: the field, what it
// holds and what belongs there, never the Go type it failed to fill.
func TestUnreadableNodeReason(t *testing.T) {
	for _, tc := range []struct{ item, want string }{
		{`{"kind":"Node","metadata":{"name":"a","labels":[1]}}`, "metadata.labels: an array where an object of strings belongs"},
		{`{"kind":"Node","metadata":{"name":"a","labels":{"k":5}}}`, "metadata.labels: a number where a string belongs"},
		{`{"kind":"Node","metadata":{"name":"a"},"status":{"capacity":{"nvidia.com/gpu":8}}}`, `status.capacity: a number where a quantity string (such as "8") belongs`},
		{`{"kind":"Node","metadata":{"name":"a"},"status":{"conditions":"Ready"}}`, "status.conditions: a string where a list of objects belongs"},
		{`{"kind":"Node","metadata":{"name":"a"},"spec":{"unschedulable":"yes"}}`, "spec.unschedulable: a string where a boolean belongs"},
	} {
		_, problems, err := Decode([]byte(`{"kind":"List","items":[` + tc.item + `]}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.item, err)
		}
		if len(problems) != 1 {
			t.Fatalf("%s: %d problems, want 1", tc.item, len(problems))
		}
		got := problems[0].Reason
		if got != "unreadable: "+tc.want {
			t.Errorf("%s:\n got %s\nwant unreadable: %s", tc.item, got, tc.want)
		}
		if strings.Contains(got, "Go struct") || strings.Contains(got, "unmarshal") {
			t.Errorf("%s: Go's decoder text leaks: %s", tc.item, got)
		}
	}
	_, _, err := Decode([]byte(`{"kind":"List","items":{}}`))
	if err == nil || !strings.Contains(err.Error(), "items: an object where a list belongs") {
		t.Errorf("items as an object: %v", err)
	}
}
