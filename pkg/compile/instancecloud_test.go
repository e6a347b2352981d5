package compile

import "testing"

// TestInstanceCloud: an instance type's cloud decides which Karpenter
// node class's NodePools list it; OCI's dotted shapes are not EC2's.
func TestInstanceCloud(t *testing.T) {
	for name, want := range map[string]string{
		"p5.48xlarge": "aws", "g6e.xlarge": "aws", "Standard_ND96isr_H100_v5": "azure", "a3-highgpu-8g": "gcp",
		"BM.GPU.H100.8": "oci", "VM.GPU.A10.1": "oci", "BM.GPU.A100-v2.8": "oci", "gx3d-160x1792x8gaudi3": "ibm",
	} {
		if got := instanceCloud(name); got != want {
			t.Errorf("instanceCloud(%q) = %q, want %q", name, got, want)
		}
	}
}
