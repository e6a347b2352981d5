package audit

// The audit report as text, for people.

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/accelc/accelc/pkg/compile"
)

// verdicts say what admission would do with a workload's violations at
// its namespace's stage.
var verdicts = map[string]string{
	compile.Deny:   "would be denied",
	compile.Warn:   "would be warned about",
	compile.DryRun: "would be reported (dryrun)",
}

// WriteText writes the report for people: totals first, then each team's
// workloads with findings, each with its violations, the changes
// enforcement would make and why it would wait.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	from := ""
	if r.Source != "" {
		from = " (" + r.Source + ")"
	}
	t := r.Totals
	fmt.Fprintf(&b, "audit of %s%s: %s, %s\n", r.Cluster, from, count(t.Workloads, "workload"), count(t.Pods, "pod"))
	fmt.Fprintf(&b, "  made again now: %d would be denied, %d warned about, %d reported (dryrun); %d would change once their namespace denies; %d would wait for quota\n",
		t.Denied, t.Warned, t.Reported, t.Changed, t.Waiting)
	fmt.Fprintf(&b, "  Gatekeeper's audit will list %s as they run now\n", count(t.Audited, "workload"))
	if t.Stranded > 0 {
		fmt.Fprintf(&b, "  stranded: %s running %s would be denied if their pods were made again; they keep running and finish, but a pod that ends is not replaced\n",
			count(t.Stranded, "workload"), count(t.StrandedDevices, "accelerator"))
	}
	if r.Kueue != "" {
		verb := "hold"
		if t.Unaccounted == 1 {
			verb = "holds"
		}
		fmt.Fprintf(&b, "  Kueue (%s): %s %s accelerators in its teams' namespaces that no admitted Workload accounts for\n", r.Kueue, count(t.Unaccounted, "pod"), verb)
	}
	if len(r.Nodes) > 0 {
		fmt.Fprintf(&b, "  node layer: this tree reconfigures %s; %d more held back at dryrun or warn would be at deny; the changes evict %s\n",
			count(t.Reconfigured, "node"), t.Withheld, count(t.Evicted, "pod"))
	}
	for _, team := range r.Teams {
		if team.Name == "" {
			fmt.Fprintf(&b, "\nnamespaces of no team (%s)\n", team.Stage)
		} else {
			fmt.Fprintf(&b, "\nteam %s (%s)\n", team.Name, team.Stage)
		}
		for _, ns := range team.Namespaces {
			fmt.Fprintf(&b, "  namespace %s\n", ns.Name)
			for _, f := range ns.Workloads {
				fmt.Fprintf(&b, "    %s %s (%s", f.Kind, f.Name, count(f.Pods, "pod"))
				if f.Devices > 0 {
					fmt.Fprintf(&b, ", %s", count(f.Devices, "accelerator"))
				}
				b.WriteString(")")
				if f.Action != "" {
					fmt.Fprintf(&b, ": %s", verdicts[f.Action])
				}
				b.WriteString("\n")
				for _, v := range f.Violations {
					fmt.Fprintf(&b, "      - %s\n", v)
				}
				if len(f.AuditOnly) > 0 {
					b.WriteString("      Gatekeeper's audit will list, until its pods are made again:\n")
					for _, v := range f.AuditOnly {
						fmt.Fprintf(&b, "      - %s\n", v)
					}
				}
				for _, c := range f.Changes {
					fmt.Fprintf(&b, "      %s\n", c)
				}
				if f.Waits != "" {
					fmt.Fprintf(&b, "      %s\n", f.Waits)
				}
			}
		}
	}
	r.writeNodes(&b)
	r.writeUnaccounted(&b)
	if len(r.UnjudgedKinds) > 0 {
		fmt.Fprintf(&b, "\nkinds served whose pod templates accelc does not judge at the workload (%d): their pods are judged only when their controller makes them, after the workload (and Kueue's admission of it) was accepted\n", len(r.UnjudgedKinds))
		for _, k := range r.UnjudgedKinds {
			fmt.Fprintf(&b, "  %s: %s\n", k, strings.Join(k.Paths, ", "))
		}
	}
	for _, warning := range r.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s\n", warning)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// writeUnaccounted lists the pods Kueue does not account for: where they
// run, what they hold, the owner they name and why.
func (r *Report) writeUnaccounted(b *strings.Builder) {
	if len(r.Unaccounted) == 0 {
		return
	}
	fmt.Fprintf(b, "\npods holding accelerators that no admitted Kueue Workload accounts for (%d): Kueue's quota does not count them\n", len(r.Unaccounted))
	for _, u := range r.Unaccounted {
		fmt.Fprintf(b, "  Pod %s/%s", u.Namespace, u.Name)
		if u.Node != "" {
			fmt.Fprintf(b, " on %s", u.Node)
		}
		fmt.Fprintf(b, ": %s", u.DevicesText())
		if u.Owner != nil {
			fmt.Fprintf(b, "; owner %s %s", u.Owner.Kind, u.Owner.Name)
		}
		fmt.Fprintf(b, "\n    %s: %s\n", u.Reason, u.Message)
	}
}

// evictions say who evicts a pod, by EvictedPod.Reason.
var evictions = map[string]string{
	EvictRepartition: "the MIG manager evicts it to repartition the node's GPUs",
	EvictSharing:     "the device plugin restarts under the pool's sharing config",
	EvictTaint:       "the pool's NoExecute taint, which it does not tolerate",
}

// writeNodes lists each node the node layer would reconfigure: its pool,
// the pool's node stage, each label and taint from what it is to what it
// becomes, and the pods the change would evict.
func (r *Report) writeNodes(b *strings.Builder) {
	if len(r.Nodes) == 0 {
		return
	}
	b.WriteString("\nnodes to reconfigure (MIG configs; sharing pools' labels, taints and device-plugin configs)\n")
	none := func(s string) string { return cmp.Or(s, "(none)") }
	for _, c := range r.Nodes {
		what := "pool"
		if c.Sharing == compile.ShareMIG {
			what = "MIG config"
		}
		state := "withheld until " + c.Setting + `.enforcement is "deny"`
		if c.Applied {
			state = "this tree applies it"
		}
		fmt.Fprintf(b, "  node %s: %s %s at %s (%s): %s\n", c.Node, what, c.Pool, c.Stage, c.StageFrom, state)
		for _, ch := range c.Changes {
			fmt.Fprintf(b, "    %s %s: %s → %s\n", ch.Kind, ch.Key, none(ch.From), ch.To)
		}
		if c.AlreadyCut {
			b.WriteString("    its GPUs already have this layout: the MIG manager repartitions nothing\n")
		}
		if len(c.Evicted) == 0 {
			b.WriteString("    evicts no running pod\n")
			continue
		}
		fmt.Fprintf(b, "    would evict %s:\n", count(len(c.Evicted), "pod"))
		for _, p := range c.Evicted {
			var what []string
			if len(p.Devices) > 0 {
				what = append(what, devicesText(p.Devices))
			}
			if len(p.Claims) > 0 {
				what = append(what, "DRA claim "+strings.Join(p.Claims, ", "))
			}
			held := ""
			if len(what) > 0 {
				held = " (" + strings.Join(what, "; ") + ")"
			}
			fmt.Fprintf(b, "    - Pod %s/%s%s: %s\n", p.Namespace, p.Name, held, evictions[p.Reason])
		}
	}
}
