// Package fluxmedia holds the media types of a Flux OCI artifact (what
// `flux push artifact` makes and source-controller pulls). It is a leaf:
// render names the content layer in the OCIRepository it renders without
// linking the registry client that artifact uses to push.
package fluxmedia

// Media types of a Flux OCI artifact: its image config and its one
// content layer, a gzipped tar of the tree.
const (
	ConfigMediaType  = "application/vnd.cncf.flux.config.v1+json"
	ContentMediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
)
