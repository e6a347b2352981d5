package render_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// TestLiveDescriptions: with catalogService.liveDescriptions the rendered
// HardwareProfiles carry no description (the catalog service owns it),
// the service runs with --live-descriptions, and its Role may read the
// profile namespace's HardwareProfiles and patch only the rendered ones;
// without it the profiles carry their descriptions and the service gets
// neither the flag nor the Role.
func TestLiveDescriptions(t *testing.T) {
	res, err := accelc.Cluster(context.Background(), filepath.Join(examplesDir, "hetero-prod"), accelc.Options{})
	require.NoError(t, err)
	m := res.Model
	described := 0
	for i := range m.Profiles {
		if m.Profiles[i].Description != "" {
			described++
		}
	}
	require.Positive(t, described, "hetero-prod's profiles have descriptions")
	for _, live := range []bool{false, true} {
		m.Cluster.CatalogService.LiveDescriptions = live
		objs, err := render.Render(m, &inventory.Inventory{})
		require.NoError(t, err)
		withText, roles := 0, 0
		var names []string
		for _, o := range objs {
			switch b := o.Body.(type) {
			case *appsv1.Deployment:
				assert.Equal(t, live, contains(b.Spec.Template.Spec.Containers[0].Args, "--live-descriptions"), "live %v: the service's args %v", live, b.Spec.Template.Spec.Containers[0].Args)
			case *rbacv1.Role:
				roles++
				assert.Equal(t, m.Cluster.ProfileNamespace, b.Namespace)
				require.Len(t, b.Rules, 2)
				assert.Equal(t, []string{"get", "list", "watch"}, b.Rules[0].Verbs)
				assert.Equal(t, []string{"patch"}, b.Rules[1].Verbs)
				names = b.Rules[1].ResourceNames
			}
			if o.Kind() == "HardwareProfile" {
				if _, ok := o.Body.GetAnnotations()[render.DescriptionAnnotation]; ok {
					withText++
				}
			}
		}
		if live {
			assert.Zero(t, withText, "no rendered HardwareProfile carries the description the service owns")
			assert.Equal(t, 1, roles)
			assert.Len(t, names, len(m.Profiles), "the Role may patch every rendered profile, and no other")
		} else {
			assert.Equal(t, described, withText)
			assert.Zero(t, roles)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
