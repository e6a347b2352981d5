package render_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/accelc"
)

// TestFluxDelivery renders the OCIRepository of a delivery to a registry
// inside the cluster: plain HTTP only where the CUE says insecure, and
// the signature check with the key in the Secret it names.
func TestFluxDelivery(t *testing.T) {
	for _, tc := range []struct {
		name, cue string
		insecure  bool
	}{
		{"https", `url: "oci://registry.example.com/accelc/flux-lab"`, false},
		{"insecure", `url: "oci://zot.registry.svc:5000/accelc/flux-lab", insecure: true`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"cluster.cue", "inventory.json"} {
				data, err := os.ReadFile(filepath.Join("../../e2e/testdata/flux", f))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
			}
			delivery := "package cluster\n\ncluster: delivery: {" + tc.cue + `, verify: secretRef: "cosign-pub"}` + "\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, "delivery.cue"), []byte(delivery), 0o644))
			res, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
			require.NoError(t, err)
			var repo struct {
				Spec struct {
					Insecure bool `json:"insecure"`
					Verify   struct {
						Provider  string `json:"provider"`
						SecretRef struct {
							Name string `json:"name"`
						} `json:"secretRef"`
					} `json:"verify"`
				} `json:"spec"`
			}
			require.NoError(t, yaml.Unmarshal(res.Tree["flux/ocirepository-accelc-flux-lab.yaml"], &repo))
			assert.Equal(t, tc.insecure, repo.Spec.Insecure)
			assert.Equal(t, "cosign", repo.Spec.Verify.Provider)
			assert.Equal(t, "cosign-pub", repo.Spec.Verify.SecretRef.Name)
		})
	}
}
