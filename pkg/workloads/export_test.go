package workloads

// VisibilityEnv are the variables whose values Trim keeps.
var VisibilityEnv = visibilityEnv

// Method is how a read asks the API server, for the benchmark.
type Method = method

// Methods name ReadLive's default and each lever turned.
var Methods = []struct {
	Name string
	M    Method
}{
	{"default", fastest},
	{"no-gzip", method{noGzip: true}},
	{"cache", method{cache: true}},
	{"serial", method{serial: true}},
}

// ReadLiveWith is ReadLive asking as m says.
var ReadLiveWith = readLive
