package artifact

// The OCI image accelc pushes: one layer of the tree, its config and
// manifest.

import (
	"bytes"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// image is the artifact BuildFiles makes: its layer and config are
// ready at once, its manifest when the content digest is in (raw waits
// for it). Push uploads the blobs first, so the content digest is
// computed while they travel.
type image struct {
	layer    v1.Layer
	config   []byte
	manifest *v1.Manifest // without annotations
	raw      func() ([]byte, error)
}

var _ v1.Image = (*image)(nil)

func (i *image) Layers() ([]v1.Layer, error) { return []v1.Layer{i.layer}, nil }

func (i *image) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

func (i *image) Size() (int64, error) {
	raw, err := i.raw()
	return int64(len(raw)), err
}

func (i *image) ConfigName() (v1.Hash, error) { return i.manifest.Config.Digest, nil }

func (i *image) ConfigFile() (*v1.ConfigFile, error) {
	return v1.ParseConfigFile(bytes.NewReader(i.config))
}

func (i *image) RawConfigFile() ([]byte, error) { return i.config, nil }

// ConfigLayer is the config as a blob (partial.ConfigLayer asks for it).
func (i *image) ConfigLayer() (v1.Layer, error) {
	return static.NewLayer(i.config, i.manifest.Config.MediaType), nil
}

func (i *image) Digest() (v1.Hash, error) {
	raw, err := i.raw()
	if err != nil {
		return v1.Hash{}, err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	return h, err
}

func (i *image) Manifest() (*v1.Manifest, error) {
	raw, err := i.raw()
	if err != nil {
		return nil, err
	}
	return v1.ParseManifest(bytes.NewReader(raw))
}

func (i *image) RawManifest() ([]byte, error) { return i.raw() }

func (i *image) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	switch h {
	case i.manifest.Layers[0].Digest:
		return i.layer, nil
	case i.manifest.Config.Digest:
		return i.ConfigLayer()
	}
	return nil, fmt.Errorf("the artifact has no blob %s", h)
}

func (i *image) LayerByDiffID(h v1.Hash) (v1.Layer, error) {
	if d, err := i.layer.DiffID(); err == nil && d == h {
		return i.layer, nil
	}
	return nil, fmt.Errorf("the artifact has no layer of diff ID %s", h)
}
