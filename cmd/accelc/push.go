package main

import (
	"crypto/ecdsa"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/safeurl"
)

func newPushCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		meta             artifact.Metadata
		created          string
		output           = outputFormats(formatText, formatJSON, formatYAML)
		tags, annotation []string
		insecure         bool
		signKey          string
	)
	cmd := &cobra.Command{
		Use:   "push OUT_DIR oci://HOST/REPOSITORY:TAG",
		Short: "Publish a rendered tree as a Flux OCI artifact",
		Long: `push packs OUT_DIR (what render wrote) as the OCI artifact ` + "`flux push artifact`" + `
makes, so Flux's OCIRepository consumes it unchanged, and pushes it: the
artifact by digest first, then its tags, so a failed push leaves no tag
behind. The artifact is reproducible: the same tree and metadata give the
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
				return usageErr("push takes OUT_DIR and oci://HOST/REPOSITORY:TAG, got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, dest := args[0], args[1]
			ref, err := artifact.ParseURL(dest, insecure)
			if err != nil {
				return usageErr("%v", err)
			}
			if err := artifact.CheckTags(tags); err != nil {
				return usageErr("--%v", err)
			}
			if meta.Annotations, err = parseAnnotations(annotation); err != nil {
				return usageErr("%v", err)
			}
			if meta.Source != "" {
				src, ok := safeurl.Source(meta.Source)
				if !ok {
					return usageErr("--source: not a URL accelc can publish: write scheme://HOST/PATH (https, http, ssh or git) or HOST:PATH, without credentials")
				}
				meta.Source = src
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return &exitError{exitInput, fmt.Errorf("%s: not a directory: give the tree `accelc render` wrote", dir)}
			}
			files, extra, err := render.RenderedFiles(dir)
			if err != nil {
				return &exitError{exitInput, err}
			}
			if len(extra) > 0 {
				fmt.Fprintf(stderr, "note: %d path(s) in %s that accelc did not render are left out: %s\n", len(extra), dir, listSome(extra, 10))
			}
			git := accelc.Checkout(dir)
			if meta.Source == "" && git.Remote != "" {
				src, ok := safeurl.Source(git.Remote)
				if !ok {
					fmt.Fprintln(stderr, "note: origin's URL is not one accelc can publish safely (scheme://HOST/PATH or USER@HOST:PATH): the artifact has no source annotation; pass --source")
				}
				meta.Source = src
			}
			if meta.Revision == "" {
				meta.Revision = git.Revision
			}
			switch {
			case created != "":
				if meta.Created, err = time.Parse(time.RFC3339, created); err != nil {
					return usageErr("--created %s: give an RFC 3339 time, such as 2026-11-20T09:30:00Z", created)
				}
			case !git.Committed.IsZero():
				meta.Created = git.Committed
			default:
				meta.Created = time.Unix(0, 0)
				fmt.Fprintln(stderr, "note: not a Git checkout and no --created: the artifact's creation time is 1970-01-01T00:00:00Z, as `flux push artifact --reproducible` sets it")
			}
			img, _, err := artifact.Build(dir, files, meta)
			if err != nil {
				return &exitError{exitInput, err}
			}
			// The key is read before anything is sent: a wrong password
			// must not leave an unsigned artifact behind.
			var key *ecdsa.PrivateKey
			if signKey != "" {
				if key, err = artifact.LoadSigningKey(signKey, []byte(os.Getenv("COSIGN_PASSWORD"))); err != nil {
					return &exitError{exitInput, err}
				}
			}
			popts := artifact.PushOptions{Tags: tags, Insecure: insecure}
			pushed, err := artifact.Push(cmd.Context(), img, ref, popts)
			if err != nil {
				return &exitError{exitOutside, err}
			}
			if key != nil {
				if pushed.Signature, err = artifact.Sign(cmd.Context(), ref.Context().Digest(pushed.Digest), key, popts); err != nil {
					return &exitError{exitOutside, fmt.Errorf("the artifact is pushed (%s) but not signed: %w", pushed.Ref, err)}
				}
			}
			if output.value != formatText {
				return writeReport(stdout, output.value, pushed)
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
	f.StringVar(&meta.Source, "source", "", "where the configuration lives, e.g. the Git URL (default: origin's URL)")
	f.StringVar(&meta.Revision, "revision", "", "the commit, as <branch>@sha1:<commit> (default: the checkout's)")
	f.StringVar(&created, "created", "", "creation time, RFC 3339 (default: the commit's time)")
	f.StringSliceVar(&tags, "tag", nil, "more tags to point at the artifact (latest, a semver)")
	f.StringArrayVarP(&annotation, "annotation", "a", nil, "extra manifest annotation key=value")
	f.BoolVar(&insecure, "insecure", false, "allow plain HTTP to a registry that is not on loopback")
	f.StringVar(&signKey, "sign-key", "", "sign the artifact with this key, as cosign does: cosign's own key (its password from $COSIGN_PASSWORD) or a PEM EC P-256 key")
	output.register(cmd, "output", "o", "output format")
	return cmd
}

func parseAnnotations(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--annotation %q: write key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

// listSome joins up to n items, and says how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
