package accelc

// The status report for people (WriteText); -o json is the Status
// itself.

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/accelc/accelc/pkg/artifact"
)

// WriteText prints the status for people: a line on what was read, then
// one section per system (Gatekeeper, Kueue, Flux) in aligned columns,
// each saying so when the system is not installed, then the drift. Digests
// and commits are shortened to 12 hex digits (-o json has them whole).
func (s *Status) WriteText(w io.Writer) error {
	var b bytes.Buffer
	s.writeHeader(&b)
	s.writeAdmission(&b)
	s.writeQueues(&b)
	s.writeDelivery(&b)
	s.writeDrift(&b)
	_, err := w.Write(b.Bytes())
	return err
}

func (s *Status) writeHeader(b *bytes.Buffer) {
	switch {
	case s.Config != "":
		fmt.Fprintf(b, "Cluster %s, configuration %s (teams from its CUE)\n", s.Cluster, s.Config)
	case s.TeamsFrom == "NamespaceEntitlements":
		fmt.Fprintf(b, "Cluster %s (teams from its NamespaceEntitlements)\n", s.Cluster)
	default:
		fmt.Fprintf(b, "Cluster %s (no teams known: no configuration given, no NamespaceEntitlements)\n", s.Cluster)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
}

// table is a tabwriter whose rows are indented under a section's line.
func table(b *bytes.Buffer, header ...string) (*tabwriter.Writer, func(cells ...any)) {
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	row := func(cells ...any) {
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = fmt.Sprint(c)
		}
		fmt.Fprintf(tw, "  %s\n", strings.Join(parts, "\t"))
	}
	cells := make([]any, len(header))
	for i, h := range header {
		cells[i] = h
	}
	row(cells...)
	return tw, row
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func (s *Status) writeAdmission(b *bytes.Buffer) {
	a := &s.Admission
	b.WriteString("\n")
	if !a.Installed {
		b.WriteString("Gatekeeper: not installed\n")
		return
	}
	if len(a.Constraints) == 0 && a.MutatorCount == 0 {
		b.WriteString("Gatekeeper: none of accelc's constraints or mutators (Flux applies them from the tree's policies/, constraints/ and mutations/)\n")
		return
	}
	var kinds []string
	for _, m := range a.Mutators {
		kinds = append(kinds, fmt.Sprintf("%d %s", m.Count, m.Kind))
	}
	mutators := plural(a.MutatorCount, "mutator", "mutators")
	if len(kinds) > 0 {
		mutators += " (" + strings.Join(kinds, ", ") + ")"
	}
	fmt.Fprintf(b, "Gatekeeper: %s, %s\n", plural(len(a.Constraints), "constraint", "constraints"), mutators)
	if len(a.Constraints) == 0 {
		return
	}
	tw, row := table(b, "CONSTRAINT", "ACTION", "VIOLATIONS", "AUDITED")
	for _, c := range a.Constraints {
		if !c.Audited {
			row(c.Kind+"/"+c.Name, c.EnforcementAction, "-", "not yet")
			continue
		}
		row(c.Kind+"/"+c.Name, c.EnforcementAction, c.TotalViolations, or(c.AuditTimestamp, "-"))
	}
	_ = tw.Flush()
	for _, c := range a.Constraints {
		listed := c.Listed()
		if listed == 0 {
			continue
		}
		count := fmt.Sprint(c.TotalViolations)
		if listed < c.TotalViolations {
			count = fmt.Sprintf("the audit lists %d of %d", listed, c.TotalViolations)
		}
		fmt.Fprintf(b, "\n  Violations of %s/%s by team (%s):\n", c.Kind, c.Name, count)
		tw, row := table(b, "TEAM", "ACTION", "OBJECT", "MESSAGE")
		for _, t := range c.ByTeam {
			for _, v := range t.Violations {
				obj := v.Kind + " " + v.Name
				if v.Namespace != "" {
					obj = v.Kind + " " + v.Namespace + "/" + v.Name
				}
				row(t.Team, or(v.EnforcementAction, c.EnforcementAction), obj, oneLine(v.Message))
			}
		}
		_ = tw.Flush()
	}
}

func (s *Status) writeQueues(b *bytes.Buffer) {
	q := &s.Queues
	b.WriteString("\n")
	if !q.Installed {
		b.WriteString("Kueue: not installed\n")
		return
	}
	n, pending := 0, 0
	for _, t := range q.Teams {
		n += len(t.ClusterQueues)
	}
	for _, p := range q.Pending {
		pending += p.Workloads
	}
	if n == 0 {
		fmt.Fprintf(b, "Kueue (%s): none of accelc's ClusterQueues (the cluster's teams have no quota, or Flux has not applied the tree's queues/)\n", q.APIVersion)
		writeUnaccounted(b, q.Unaccounted)
		return
	}
	outside := ""
	if len(q.Unaccounted) > 0 {
		outside = ", " + plural(len(q.Unaccounted), "pod", "pods") + " holding accelerators outside it"
	}
	fmt.Fprintf(b, "Kueue (%s): %s of %s, %s pending%s\n", q.APIVersion,
		plural(n, "ClusterQueue", "ClusterQueues"), plural(len(q.Teams), "team", "teams"), plural(pending, "workload", "workloads"), outside)
	tw, row := table(b, "TEAM", "PROFILE", "CLUSTERQUEUE", "ADMITTED", "RESERVING", "PENDING")
	for _, t := range q.Teams {
		for _, cq := range t.ClusterQueues {
			row(t.Team, or(cq.Profile, "-"), cq.Name, cq.AdmittedWorkloads, cq.ReservingWorkloads, cq.PendingWorkloads)
		}
	}
	_ = tw.Flush()
	b.WriteString("\n")
	tw, row = table(b, "TEAM", "COHORT", "FLAVOR", "RESOURCE", "QUOTA", "RESERVED", "USED")
	for _, t := range q.Teams {
		for _, f := range t.Quota {
			row(t.Team, or(t.Cohort, "-"), f.Flavor, f.Resource, f.Nominal, f.Reserved, f.Used)
		}
	}
	_ = tw.Flush()
	b.WriteString("\n")
	if len(q.Pending) == 0 {
		b.WriteString("  No workloads pending in accelc's LocalQueues.\n")
	} else {
		tw, row = table(b, "NAMESPACE", "LOCALQUEUE", "TEAM", "PROFILE", "PENDING")
		for _, p := range q.Pending {
			row(p.Namespace, p.LocalQueue, p.Team, or(p.Profile, "-"), p.Workloads)
		}
		_ = tw.Flush()
	}
	writeUnaccounted(b, q.Unaccounted)
}

// writeUnaccounted lists the pods Kueue does not account for: where they
// run, what they hold, the owner they name, and why.
func writeUnaccounted(b *bytes.Buffer, pods []UnaccountedPod) {
	if len(pods) == 0 {
		return
	}
	b.WriteString("\n  Pods holding accelerators that no admitted Kueue Workload accounts for (Kueue's quota counts none of their devices):\n")
	tw, row := table(b, "TEAM", "POD", "NODE", "DEVICES", "OWNER", "WHY")
	for _, p := range pods {
		owner := "-"
		if p.Owner != nil {
			owner = p.Owner.Kind + "/" + p.Owner.Name
		}
		row(p.Team, p.Namespace+"/"+p.Name, or(p.Node, "-"), p.DevicesText(), owner, p.Reason+": "+oneLine(p.Message))
	}
	_ = tw.Flush()
}

func (s *Status) writeDelivery(b *bytes.Buffer) {
	d := &s.Delivery
	b.WriteString("\n")
	if !d.Installed {
		b.WriteString("Flux: not installed\n")
		return
	}
	if len(d.Sources) == 0 && len(d.Kustomizations) == 0 {
		b.WriteString("Flux: none of accelc's OCIRepositories or Kustomizations (apply the tree's flux/ folder once)\n")
		return
	}
	fmt.Fprintf(b, "Flux: %s, %s\n", plural(len(d.Sources), "OCIRepository", "OCIRepositories"), plural(len(d.Kustomizations), "Kustomization", "Kustomizations"))
	tw, row := table(b, "KIND", "NAME", "READY", "REVISION", "MESSAGE")
	for _, src := range d.Sources {
		row("OCIRepository", src.Namespace+"/"+src.Name, or(src.Ready.Status, "-"), short(or(src.Revision, "-")), short(oneLine(src.Ready.Message)))
	}
	for _, k := range d.Kustomizations {
		row("Kustomization", k.Namespace+"/"+k.Name, or(k.Ready.Status, "-"), short(or(k.LastAppliedRevision, "-")), short(oneLine(k.Ready.Message)))
	}
	_ = tw.Flush()
	for _, src := range d.Sources {
		if src.Revision == "" {
			continue
		}
		var facts []string
		if r := src.Metadata[artifact.AnnotationRevision]; r != "" {
			facts = append(facts, "commit "+short(r))
		}
		if c := src.Metadata[artifact.AnnotationCreated]; c != "" {
			facts = append(facts, "created "+c)
		}
		if c := src.Metadata[artifact.AnnotationContentDigest]; c != "" {
			facts = append(facts, "content "+short(c))
		}
		if u := src.Metadata[artifact.AnnotationSource]; u != "" {
			facts = append(facts, "from "+u)
		}
		if len(facts) == 0 {
			facts = []string{"no annotations"}
		}
		fmt.Fprintf(b, "  artifact %s: %s\n", short(src.Revision), strings.Join(facts, ", "))
	}
}

func (s *Status) writeDrift(b *bytes.Buffer) {
	b.WriteString("\n")
	d := s.Delivery.Drift
	if d == nil {
		b.WriteString("drift not computed: give --config CLUSTER_DIR to compare the cluster with what the checkout renders\n")
		return
	}
	switch d.State {
	case InSync:
		fmt.Fprintf(b, "in sync: the cluster runs %s, which is what the checkout renders\n", describe(d.Cluster))
	case Drifted:
		fmt.Fprintf(b, "drift: cluster runs %s, the checkout renders %s", describe(d.Cluster), describe(d.Checkout))
		if d.Reason != "" {
			fmt.Fprintf(b, ", %s", short(d.Reason))
		}
		b.WriteString("\n")
	case Pending:
		fmt.Fprintf(b, "pending: %s\n", short(d.Reason))
	default:
		fmt.Fprintf(b, "drift unknown: %s\n", short(d.Reason))
	}
	if d.Hint != "" {
		fmt.Fprintf(b, "  hint: %s\n", d.Hint)
	}
}

// describe names one side of a comparison: its commit (else its
// artifact) and its content digest.
func describe(r Rendering) string {
	s := or(r.Revision, r.Artifact)
	switch {
	case s == "" && r.Uncommitted:
		s = "uncommitted changes"
	case s == "":
		s = "a tree outside Git"
	case r.Uncommitted:
		s += " with uncommitted changes"
	}
	s = short(s)
	if r.ContentDigest != "" {
		s += " (content " + short(r.ContentDigest) + ")"
	}
	return s
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// oneLine keeps a message on one line of a table.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// shortHex is how many hex digits of a digest or commit text shows.
const shortHex = 12

// short shortens every sha1:<hex> and sha256:<hex> in s to shortHex
// digits.
func short(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "sha")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		prefix := ""
		for _, p := range []string{"sha256:", "sha1:"} {
			if strings.HasPrefix(s, p) {
				prefix = p
				break
			}
		}
		if prefix == "" {
			b.WriteString("sha")
			s = s[3:]
			continue
		}
		n := len(prefix)
		for n < len(s) && strings.IndexByte("0123456789abcdef", s[n]) >= 0 {
			n++
		}
		end := min(n, len(prefix)+shortHex)
		b.WriteString(s[:end])
		s = s[n:]
	}
}
