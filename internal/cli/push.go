package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/publish"
)

// NewPushCmd is `accelc push`.
func NewPushCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		opts   publish.Options
		output = OutputFormats(FormatText, FormatJSON, FormatYAML)
	)
	cmd := &cobra.Command{
		Use:   "push OUT_DIR oci://HOST/REPOSITORY:TAG",
		Short: "Publish a rendered tree as a Flux OCI artifact",
		Long: `push packs OUT_DIR (what render wrote) as the OCI artifact ` + "`flux push artifact`" + `
makes, so Flux's OCIRepository consumes it unchanged, and pushes it: its
blobs first, then its manifest to the tag and each --tag, so a failed push
leaves no tag behind. The artifact is reproducible: the same tree and metadata give the
same digest.

Only what render wrote is packed: the files the tree's kustomizations list,
each carrying accelc's header. A folder accelc did not render is refused
(exit 1), and anything else in the tree (a .git folder, an editor's backup)
is left out, with a note. Tags are checked before anything is sent (exit 2).

--source and --revision annotate it (org.opencontainers.image.source and
.revision); left out, they come from the Git checkout (origin's URL, and
<branch>@sha1:<commit>). The source is published as scheme://host/path
only, rebuilt without credentials, query or fragment (user@host:path as
ssh://host/path); an origin that cannot be rebuilt so is left out, with a
note. The creation time is the commit's (or --created), never the clock. Credentials come from the Docker config and
its credential helpers, as docker and crane use them. TLS is required but
for registries on loopback, or with --insecure.

--sign-key signs the artifact as cosign does (its v2 signature format:
the image sha256-<digest>.sig beside it, keeping signatures already
there), which Flux's OCIRepository verifies with verify.provider cosign and
the public key in its secretRef. The key is cosign's own (cosign
generate-key-pair; its password from $COSIGN_PASSWORD) or a PEM EC P-256
key; it is read before anything is pushed.`,
		Example: `  accelc push out/hetero-prod oci://ghcr.io/acme/accelc/hetero-prod:v1.4.0 --tag latest \
      --source https://github.com/acme/fleet --revision main@sha1:$(git rev-parse HEAD)`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return UsageErr("push takes OUT_DIR and oci://HOST/REPOSITORY:TAG, got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir, opts.Dest, opts.Log = args[0], args[1], stderr
			pushed, err := publish.Push(cmd.Context(), opts)
			if err != nil {
				return LibraryErr(err)
			}
			if output.Value() != FormatText {
				return WriteReport(stdout, output.Value(), pushed)
			}
			fmt.Fprintf(stdout, "pushed %s\n", pushed.Ref)
			for _, t := range pushed.Tags {
				fmt.Fprintf(stdout, "tagged %s:%s\n", pushed.Repository, t)
			}
			if s := pushed.Signature; s != nil {
				fmt.Fprintf(stdout, "signed %s (%d signature(s))\n", s.Tag, s.Signatures)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Source, "source", "", "where the configuration lives, e.g. the Git URL (default: origin's URL)")
	f.StringVar(&opts.Revision, "revision", "", "the commit, as <branch>@sha1:<commit> (default: the checkout's)")
	f.StringVar(&opts.Created, "created", "", "creation time, RFC 3339 (default: the commit's time)")
	f.StringSliceVar(&opts.Tags, "tag", nil, "more tags to point at the artifact (latest, a semver)")
	f.StringArrayVarP(&opts.Annotations, "annotation", "a", nil, "extra manifest annotation key=value")
	f.BoolVar(&opts.Insecure, "insecure", false, "allow plain HTTP to a registry that is not on loopback")
	f.StringVar(&opts.SignKey, "sign-key", "", "sign the artifact with this key, as cosign does: cosign's own key (its password from $COSIGN_PASSWORD) or a PEM EC P-256 key")
	_ = cmd.MarkFlagFilename("sign-key")
	output.Register(cmd)
	return cmd
}
