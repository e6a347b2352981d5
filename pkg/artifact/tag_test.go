package artifact_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/accelc/accelc/pkg/artifact"
)

// TestCheckTagsGrammar: CheckTags accepts exactly the OCI distribution
// spec's tags, the regular expression [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}.
func TestCheckTagsGrammar(t *testing.T) {
	spec := regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)
	tags := []string{"", "v1", "latest", "v1.4.0", "_x", ".x", "-x", "x-", "x.", "a_b-c.D", "v1+build", "v1/x", "ü", "x y", "x\n",
		strings.Repeat("a", 128), strings.Repeat("a", 129), "0" + strings.Repeat(".", 127), "0" + strings.Repeat(".", 128)}
	for c := range 256 {
		tags = append(tags, string(rune(c)), "a"+string(byte(c)))
	}
	for _, tag := range tags {
		err := artifact.CheckTags([]string{tag})
		assert.Equal(t, spec.MatchString(tag), err == nil, "tag %q: %v", tag, err)
	}
}
