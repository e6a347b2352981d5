// Package controlplane starts a real Kubernetes control plane on 127.0.0.1
// for tests: etcd and kube-apiserver, and kube-scheduler on request. The
// tests of the live inventory source, and the end-to-end suite, run against
// it instead of a fake clientset, so what they check is what an API server
// does: status subresources, RBAC, admission, pagination.
//
// It needs three programs:
//
//   - etcd on PATH (Debian's etcd-server package);
//   - kube-apiserver and kube-scheduler of Kubernetes [K8sVersion], in the
//     directory named by $ACCELC_K8S_BIN, or else in bin/k8s-v1.36.3 at the
//     repository root.
//
// `make control-plane` installs etcd when it is missing and builds the two
// Kubernetes commands from the tools/e2e module (about ten minutes once, then
// cached by version); `make test` runs it first. Without the programs [Start]
// skips the test with a message naming `make control-plane`, except when
// CI=true: there it fails the test, so CI cannot pass by skipping.
//
// Everything a control plane makes lives in the test's temporary directory:
// a fresh CA and the serving, client and service-account keys (made with
// crypto/x509, ECDSA P-256), etcd's data, one log file per process, and the
// kubeconfig files. Every server listens on 127.0.0.1 only, on ports picked
// free at start. The processes are stopped, by process group, when the test
// ends, whether it passed or not; when it failed, the tail of each log is
// written to the test log. Start-up takes about four seconds.
//
// The admin identity is in group system:masters. [ControlPlane.UserKubeconfig]
// mints a kubeconfig for any user name and groups, which RBAC then limits
// like any other user; nothing is bound to a new user until the test binds it.
// There is no controller manager unless [WithControllerManager] asks for
// kube-controller-manager: without it no namespace controller, no garbage
// collection, no workload controllers. The ServiceAccount admission plugin
// is off so that pods can be created without a default service account.
//
// [ControlPlane.StartKWOK] adds KWOK's simulated kubelets ([KWOKVersion])
// for the nodes annotated kwok.x-k8s.io/node=fake: they are made Ready,
// renew their leases, and run the pods bound to them (a Job's pods
// succeed after the delay their pod-complete annotation names).
//
// [ControlPlane.StartGatekeeper] adds Gatekeeper's controller manager
// ([GatekeeperVersion], the gator CLI's version), run out of cluster as a
// cluster runs it in pods: the validating and mutating admission webhook,
// audit, status and the constraint CRDs' generation, in one process
// (POD_NAME and POD_NAMESPACE name a pod in gatekeeper-system made for it,
// held off every node by a scheduling gate, which owns its status objects). It installs Gatekeeper's CRDs by server-side apply,
// serves the webhook on 127.0.0.1 with a certificate from the control
// plane's CA (--disable-cert-rotation), keeps its health probes on
// 127.0.0.1 and its metrics off every interface (the OpenTelemetry backend
// only dials out), and registers the two webhook configurations with URLs
// and failurePolicy Fail, so no request passes unchecked. `make e2e-tools`
// builds the manager from tools/gatekeeper into
// bin/gatekeeper-<version>/manager and copies its CRDs beside it.
//
// [ControlPlane.StartKueue] adds Kueue's controller manager ([KueueVersion])
// the same way: all its CRDs, a Configuration made from its default one
// (servers on 127.0.0.1, a webhook certificate from the control plane's CA,
// no leader election, no visibility server, the batch/job and pod
// integrations in the namespaces asked for) and its own webhook
// configurations registered with URLs. Kueue reads a metrics certificate
// from the fixed path /etc/kueue/metrics/certs, so the manager runs in a
// mount namespace of its own (unshare(1)) with an overlay on /etc whose upper
// layer, in the test's directory, holds it. `make e2e-tools` builds it from
// tools/kueue into bin/kueue-<version>/ with its CRDs, webhook
// configurations and default Configuration.
package controlplane
