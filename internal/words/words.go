// Package words holds the small helpers accelc's messages share.
package words

import "strconv"

// Plural counts word: "1 GPU", "8 GPUs". Words whose plural is not their
// singular plus "s" are not used with it.
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
