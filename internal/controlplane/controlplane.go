package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	// K8sVersion is the Kubernetes version of kube-apiserver and
	// kube-scheduler; the Makefile's K8S_VERSION and tools/e2e/go.mod say
	// the same.
	K8sVersion = "v1.36.3"

	// OlderK8sVersion is the oldest Kubernetes the end-to-end suite runs
	// its older-minor subset on (README's supported versions): a minor
	// without MutatingAdmissionPolicy on by default (beta, off, in 1.34
	// and 1.35). The Makefile's K8S_OLDER_VERSION and
	// tools/e2e-k8s134/go.mod say the same.
	OlderK8sVersion = "v1.34.12"

	// VersionEnv picks the version Start runs: K8sVersion (unset) or
	// OlderK8sVersion. kubectl and k8s-validate stay at K8sVersion.
	VersionEnv = "ACCELC_K8S_VERSION"

	// ClusterName and ContextName name the cluster and the context, the
	// current one, in every kubeconfig this package writes.
	ClusterName = "accelc-e2e"
	ContextName = "accelc-e2e"

	// AdminUser is the admin's user name; the admin is in AdminGroup.
	AdminUser  = "accelc-e2e-admin"
	AdminGroup = "system:masters"

	// BinEnv names a directory holding kube-apiserver and kube-scheduler,
	// used instead of bin/k8s-<ServerVersion()> at the repository root.
	BinEnv = "ACCELC_K8S_BIN"
)

const (
	// startTimeout bounds the whole start-up, retry included.
	startTimeout = 90 * time.Second
	// pollInterval is how often start-up checks a server's health.
	pollInterval = 50 * time.Millisecond
	// serviceCIDR is the service cluster IP range; its first address is
	// the kubernetes service's, which the serving certificate names.
	serviceCIDR = "10.0.0.0/24"
)

var errBindConflict = errors.New("a port picked free was taken before the server bound it")

// ServerVersion is the Kubernetes version Start runs: $ACCELC_K8S_VERSION
// when set, else K8sVersion. Only the two versions the Makefile builds are
// accepted; Start fails a test that asks for another.
func ServerVersion() (string, error) {
	switch v := os.Getenv(VersionEnv); v {
	case "", K8sVersion:
		return K8sVersion, nil
	case OlderK8sVersion:
		return v, nil
	default:
		return "", fmt.Errorf("$%s=%s: the end-to-end control plane is built at %s and %s only (make control-plane)", VersionEnv, v, K8sVersion, OlderK8sVersion)
	}
}

// Minor is the minor version of a version such as v1.34.12 (34); 0 when
// it cannot be read.
func Minor(version string) int {
	_, rest, _ := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(minor)
	if err != nil {
		return 0
	}
	return n
}

// Option changes what Start starts.
type Option func(*options)

type options struct {
	scheduler, controllerManager bool
	noWatchList                  bool
	profiling                    bool
}

// WithProfiling serves kube-apiserver's Go profiles at /debug/pprof/ (its
// --profiling; off otherwise): for a benchmark to say where the API
// server's time goes.
func WithProfiling() Option {
	return func(o *options) { o.profiling = true }
}

// WithScheduler starts kube-scheduler too, so that pods created in the
// test are bound to nodes. With no kubelet the pods never run.
func WithScheduler() Option {
	return func(o *options) { o.scheduler = true }
}

// WithControllerManager starts kube-controller-manager too, with every
// controller it runs by default: Deployments, StatefulSets and Jobs make
// their pods, namespaces are deleted with what they hold, garbage is
// collected, and nodes whose kubelet stops renewing its lease go NotReady.
// Each controller acts as its own service account, as kubeadm runs it.
func WithControllerManager() Option {
	return func(o *options) { o.controllerManager = true }
}

// WithoutWatchList turns kube-apiserver's WatchList feature off. The
// etcd on PATH (3.4.23) is older than the 3.4.31 the API server needs to
// serve a watch stream (RequestWatchProgress), and with WatchList on the
// API server makes every watch opened without a resourceVersion such a
// stream, which then fails. Informers fall back to a list; a client that
// watches directly, as Kueue's MultiKueue watches a worker's Workloads
// and Jobs, gets only the error, over and over.
func WithoutWatchList() Option {
	return func(o *options) { o.noWatchList = true }
}

// ControlPlane is a running etcd and kube-apiserver, and kube-scheduler when
// asked for, that live as long as the test that started them.
type ControlPlane struct {
	version    string
	dir        string
	url        string
	ca         *ca
	admin      keyPair
	kubeconfig string
	procs      []*process
	ready      []string // "etcd 400ms": how long each process took to be healthy
}

// Start starts a control plane for t and waits until the API server is
// ready and the default namespace exists. It stops every process it started
// when t ends. When the programs are missing it skips t, naming `make
// control-plane`, or fails t when CI=true.
func Start(t testing.TB, opts ...Option) *ControlPlane {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	version, err := ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := findBinaries(o, version)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and the control plane is not there: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}

	// The temporary directory is made before the cleanup that stops the
	// processes is registered, so it is removed after they have stopped.
	cp := &ControlPlane{version: version, dir: t.TempDir()}
	t.Cleanup(func() { cp.stop(t) })

	if err := cp.makeCerts(); err != nil {
		t.Fatalf("making the control plane's certificates: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
	defer cancel()
	begin := time.Now()
	for attempt := 1; ; attempt++ {
		err := cp.start(ctx, bins, o, attempt)
		if err == nil {
			break
		}
		if attempt == 1 && errors.Is(err, errBindConflict) {
			t.Logf("control plane: %v; starting again on other ports", err)
			cp.stopAll(t)
			cp.ready = nil
			continue
		}
		// The cleanup writes the end of each log to the test log.
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Logf("control plane %s at %s ready in %s (%s)", cp.version, cp.url, time.Since(begin).Round(time.Millisecond), strings.Join(cp.ready, ", "))
	return cp
}

// Version is the Kubernetes version the control plane runs (v1.36.3).
func (cp *ControlPlane) Version() string { return cp.version }

// URL is the API server's address, https://127.0.0.1:PORT.
func (cp *ControlPlane) URL() string { return cp.url }

// Kubeconfig is the path of the admin's kubeconfig file.
func (cp *ControlPlane) Kubeconfig() string { return cp.kubeconfig }

// Dir is the temporary directory holding the logs, certificates and etcd's
// data.
func (cp *ControlPlane) Dir() string { return cp.dir }

// RESTConfig is a new client configuration for the admin, with no
// client-side rate limit.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return cp.restConfig(cp.admin)
}

// UserKubeconfig writes a kubeconfig for user in groups, with a client
// certificate the API server trusts, into a temporary directory of t, and
// returns its path. RBAC grants the user nothing beyond what every
// authenticated user has until the test binds roles to it.
func (cp *ControlPlane) UserKubeconfig(t testing.TB, user string, groups ...string) string {
	t.Helper()
	kp := cp.userKeyPair(t, user, groups)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.writeKubeconfig(path, user, kp); err != nil {
		t.Fatalf("writing the kubeconfig for %q: %v", user, err)
	}
	return path
}

// UserRESTConfig is a client configuration for user in groups; see
// UserKubeconfig.
func (cp *ControlPlane) UserRESTConfig(t testing.TB, user string, groups ...string) *rest.Config {
	t.Helper()
	return cp.restConfig(cp.userKeyPair(t, user, groups))
}

func (cp *ControlPlane) userKeyPair(t testing.TB, user string, groups []string) keyPair {
	t.Helper()
	if user == "" {
		t.Fatal("controlplane: the user name is empty")
	}
	kp, err := cp.ca.client(user, groups)
	if err != nil {
		t.Fatalf("making a client certificate for %q: %v", user, err)
	}
	return kp
}

func (cp *ControlPlane) restConfig(kp keyPair) *rest.Config {
	return &rest.Config{
		Host: cp.url,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   cp.ca.certPEM,
			CertData: kp.certPEM,
			KeyData:  kp.keyPEM,
		},
		QPS: -1, // a negative QPS turns client-go's rate limiter off
	}
}

func (cp *ControlPlane) writeKubeconfig(path, user string, kp keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ClusterName] = &clientcmdapi.Cluster{
		Server:                   cp.url,
		CertificateAuthorityData: cp.ca.certPEM,
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: kp.certPEM,
		ClientKeyData:         kp.keyPEM,
	}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ClusterName, AuthInfo: user}
	cfg.CurrentContext = ContextName
	return clientcmd.WriteToFile(*cfg, path)
}

// The files makeCerts writes into the directory.
const (
	caFile           = "ca.crt"
	servingCertFile  = "apiserver.crt"
	servingKeyFile   = "apiserver.key"
	saKeyFile        = "service-account.key"
	schedCertFile    = "scheduler.crt"
	schedKeyFile     = "scheduler.key"
	schedKubeconfig  = "scheduler.kubeconfig"
	kcmKubeconfig    = "controller-manager.kubeconfig"
	adminKubeconfig  = "kubeconfig"
	schedulerUser    = "system:kube-scheduler"
	kcmUser          = "system:kube-controller-manager"
	serviceAccountIs = "https://kubernetes.default.svc.cluster.local"
)

func (cp *ControlPlane) makeCerts() error {
	ca, err := newCA(time.Now())
	if err != nil {
		return err
	}
	cp.ca = ca
	_, cidr, err := net.ParseCIDR(serviceCIDR)
	if err != nil {
		return err
	}
	serviceIP := cidr.IP.To4()
	serviceIP[3]++
	loopback := net.IPv4(127, 0, 0, 1)
	// The API server by its loopback address, and by the in-cluster names
	// and address of the kubernetes service.
	serving, err := ca.serving("kube-apiserver", []net.IP{loopback, serviceIP}, []string{
		"localhost",
		"kubernetes",
		"kubernetes.default",
		"kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local",
	})
	if err != nil {
		return err
	}
	// kube-scheduler serves its health checks on 127.0.0.1 only.
	schedServing, err := ca.serving("kube-scheduler", []net.IP{loopback}, []string{"localhost"})
	if err != nil {
		return err
	}
	cp.admin, err = ca.client(AdminUser, []string{AdminGroup})
	if err != nil {
		return err
	}
	saKey, err := serviceAccountKey()
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		caFile:          ca.certPEM,
		servingCertFile: serving.certPEM,
		servingKeyFile:  serving.keyPEM,
		schedCertFile:   schedServing.certPEM,
		schedKeyFile:    schedServing.keyPEM,
		saKeyFile:       saKey,
	} {
		if err := os.WriteFile(filepath.Join(cp.dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// start starts etcd and kube-apiserver, and kube-scheduler when asked, on
// fresh ports, and waits until each is healthy.
func (cp *ControlPlane) start(ctx context.Context, bins binaries, o options, attempt int) error {
	ports, err := freePorts(5)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort, schedPort, kcmPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)

	etcd, err := cp.run("etcd", bins.etcd,
		"--name=accelc-e2e",
		"--data-dir="+filepath.Join(cp.dir, "etcd-data-"+strconv.Itoa(attempt)),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=accelc-e2e="+peerURL,
		"--initial-cluster-state=new",
		"--logger=zap",
		"--log-outputs=stderr",
	)
	if err != nil {
		return err
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := cp.waitFor(ctx, etcd, func(ctx context.Context) error {
		return httpOK(ctx, plain, etcdURL+"/health")
	}); err != nil {
		return err
	}

	cp.url = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	args := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--etcd-servers=" + etcdURL,
		"--tls-cert-file=" + filepath.Join(cp.dir, servingCertFile),
		"--tls-private-key-file=" + filepath.Join(cp.dir, servingKeyFile),
		"--client-ca-file=" + filepath.Join(cp.dir, caFile),
		"--authorization-mode=Node,RBAC",
		// As every real cluster (kubeadm, managed ones): privileged
		// containers are allowed by the API server and governed by
		// admission (Pod Security, Gatekeeper).
		"--allow-privileged=true",
		"--service-account-issuer=" + serviceAccountIs,
		"--service-account-key-file=" + filepath.Join(cp.dir, saKeyFile),
		"--service-account-signing-key-file=" + filepath.Join(cp.dir, saKeyFile),
		"--service-cluster-ip-range=" + serviceCIDR,
		// No controller manager makes the default service accounts.
		"--disable-admission-plugins=ServiceAccount",
		// The kubernetes service cannot have a loopback endpoint.
		"--endpoint-reconciler-type=none",
		// Dynamic Resource Allocation's beta versions, as a cluster that
		// turned DRA on before it went GA still serves them: policies
		// must read claims written in each.
		"--runtime-config=resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true",
		"--profiling=" + strconv.FormatBool(o.profiling),
	}
	if o.noWatchList {
		args = append(args, "--feature-gates=WatchList=false")
	}
	apiserver, err := cp.run("kube-apiserver", bins.apiserver, args...)
	if err != nil {
		return err
	}
	admin := cp.RESTConfig()
	admin.Timeout = 5 * time.Second
	adminHTTP, err := rest.HTTPClientFor(admin)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	if err := cp.waitFor(ctx, apiserver, func(ctx context.Context) error {
		if err := httpOK(ctx, adminHTTP, cp.url+"/readyz"); err != nil {
			return err
		}
		_, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	cp.kubeconfig = filepath.Join(cp.dir, adminKubeconfig)
	if err := cp.writeKubeconfig(cp.kubeconfig, AdminUser, cp.admin); err != nil {
		return err
	}

	if o.controllerManager {
		if err := cp.startControllerManager(ctx, bins.controllerManager, kcmPort); err != nil {
			return err
		}
	}
	if !o.scheduler {
		return nil
	}
	schedKP, err := cp.ca.client(schedulerUser, nil)
	if err != nil {
		return err
	}
	schedConfig := filepath.Join(cp.dir, schedKubeconfig)
	if err := cp.writeKubeconfig(schedConfig, schedulerUser, schedKP); err != nil {
		return err
	}
	scheduler, err := cp.run("kube-scheduler", bins.scheduler,
		"--kubeconfig="+schedConfig,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(schedPort),
		"--tls-cert-file="+filepath.Join(cp.dir, schedCertFile),
		"--tls-private-key-file="+filepath.Join(cp.dir, schedKeyFile),
		"--leader-elect=false",
		"--profiling=false",
	)
	if err != nil {
		return err
	}
	// Anonymous, trusting the CA: with no delegated authentication or
	// authorization, kube-scheduler serves /readyz to anyone on 127.0.0.1.
	schedHTTP, err := rest.HTTPClientFor(&rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(schedPort),
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.ca.certPEM},
		Timeout:         2 * time.Second,
	})
	if err != nil {
		return err
	}
	return cp.waitFor(ctx, scheduler, func(ctx context.Context) error {
		return httpOK(ctx, schedHTTP, "https://127.0.0.1:"+strconv.Itoa(schedPort)+"/readyz")
	})
}

// startControllerManager starts kube-controller-manager on port and waits
// until it is healthy. It serves with the scheduler's certificate (both
// are "127.0.0.1 only"), signs service-account tokens with the API
// server's key, and gives each controller its own service account.
func (cp *ControlPlane) startControllerManager(ctx context.Context, bin string, port int) error {
	kp, err := cp.ca.client(kcmUser, nil)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(cp.dir, kcmKubeconfig)
	if err := cp.writeKubeconfig(kubeconfig, kcmUser, kp); err != nil {
		return err
	}
	kcm, err := cp.run("kube-controller-manager", bin,
		"--kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+filepath.Join(cp.dir, schedCertFile),
		"--tls-private-key-file="+filepath.Join(cp.dir, schedKeyFile),
		"--service-account-private-key-file="+filepath.Join(cp.dir, saKeyFile),
		"--root-ca-file="+filepath.Join(cp.dir, caFile),
		"--use-service-account-credentials=true",
		"--service-cluster-ip-range="+serviceCIDR,
		// A kubelet-less cluster of thousands of nodes makes pods in
		// bursts: client-go's default 20 requests a second would make the
		// Job and ReplicaSet controllers, not admission, the bottleneck.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		// KWOK's simulated kubelets renew their leases every 30 s, not
		// every 10 s (StartKWOK): a node goes NotReady after 3 minutes
		// without one, not 50 s.
		"--node-monitor-grace-period=180s",
		"--leader-elect=false",
		"--profiling=false",
	)
	if err != nil {
		return err
	}
	kcmHTTP, err := rest.HTTPClientFor(&rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(port),
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.ca.certPEM},
		Timeout:         2 * time.Second,
	})
	if err != nil {
		return err
	}
	return cp.waitFor(ctx, kcm, func(ctx context.Context) error {
		return httpOK(ctx, kcmHTTP, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz")
	})
}

// run starts a process and records it, so that it is stopped with the rest.
func (cp *ControlPlane) run(name, path string, args ...string) (*process, error) {
	return cp.runEnv(name, path, nil, args...)
}

// runEnv is run with env added to the process's environment.
func (cp *ControlPlane) runEnv(name, path string, env []string, args ...string) (*process, error) {
	p, err := startProcessEnv(cp.dir, name, path, env, args...)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, p)
	return p, nil
}

// stop prints the logs when t failed, then stops the processes.
func (cp *ControlPlane) stop(t testing.TB) {
	if t.Failed() {
		for _, p := range cp.procs {
			t.Logf("%s: last %d lines of %s:\n%s", p.name, logTailLines, p.logPath, p.tail())
		}
	}
	cp.stopAll(t)
}

// stopAll stops the processes, the last started first.
func (cp *ControlPlane) stopAll(t testing.TB) {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		switch err := cp.procs[i].stop(); {
		case errors.Is(err, errKilled):
			t.Logf("control plane: %v", err)
		case err != nil:
			t.Errorf("control plane: %v", err)
		}
	}
	cp.procs = nil
}

// waitFor calls check until it succeeds, the process exits, or ctx ends.
func (cp *ControlPlane) waitFor(ctx context.Context, p *process, check func(context.Context) error) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		if done, err := p.exited(); done {
			if p.bindConflict() {
				return fmt.Errorf("%w: %v", errBindConflict, err)
			}
			return err
		}
		if last = check(ctx); last == nil {
			cp.ready = append(cp.ready, p.name+" "+time.Since(p.started).Round(10*time.Millisecond).String())
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy: %w (last check: %v)", p.name, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// httpOK GETs url and wants 200 OK.
func httpOK(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

type binaries struct {
	etcd, apiserver, scheduler, controllerManager string
}

// findBinaries looks for etcd on PATH and for kube-apiserver, and
// kube-scheduler and kube-controller-manager when asked, in
// $ACCELC_K8S_BIN or bin/k8s-<version> at the repository root. Its
// error says what is missing and how to get it.
func findBinaries(o options, version string) (binaries, error) {
	var b binaries
	var missing []string
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		missing = append(missing, "etcd on PATH")
	}
	b.etcd = etcd

	dir := os.Getenv(BinEnv)
	where := "$" + BinEnv + "=" + dir
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return b, err
		}
		dir = filepath.Join(root, "bin", "k8s-"+version)
		where = dir
	}
	names := []string{"kube-apiserver"}
	if o.scheduler {
		names = append(names, "kube-scheduler")
	}
	if o.controllerManager {
		names = append(names, "kube-controller-manager")
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, name+" in "+where)
			continue
		}
		switch name {
		case "kube-apiserver":
			b.apiserver = path
		case "kube-scheduler":
			b.scheduler = path
		case "kube-controller-manager":
			b.controllerManager = path
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("no %s: run `make control-plane` to install etcd and build Kubernetes %s, or set %s to a directory holding them",
			strings.Join(missing, ", no "), version, BinEnv)
	}
	return b, nil
}

var accelcModule = regexp.MustCompile(`(?m)^module\s+github\.com/accelc/accelc\s*$`)

// repoRoot is the nearest directory above the working directory whose
// go.mod is accelc's; go test runs a test in its package's directory.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && accelcModule.Match(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no accelc go.mod above %s: set %s to the directory holding kube-apiserver and kube-scheduler %s", wd, BinEnv, K8sVersion)
		}
		dir = parent
	}
}

// PIDs are the process IDs of what the control plane runs (etcd,
// kube-apiserver, and every manager started on it), by name, for a
// benchmark's CPU and memory figures.
func (cp *ControlPlane) PIDs() map[string]int {
	out := map[string]int{}
	for _, p := range cp.procs {
		out[p.name] = p.cmd.Process.Pid
	}
	return out
}
