package words

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 GPUs", 1: "1 GPU", 8: "8 GPUs"} {
		if got := Plural(n, "GPU"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}
