// Package safeurl rebuilds URLs from the parts that are safe to publish or
// print: scheme, host, port and path. Userinfo, query and fragment never
// survive, whatever the input looks like.
//
// The result is built from what was recognised, never by deleting what was
// found: net/url refuses some inputs that Git and client-go accept (a bad
// escape or a space in a password) and reads others differently, and a
// Git remote may be scp-like (user@host:path), which is no URL at all. A
// function that deleted userinfo from what net/url parsed would return
// such inputs whole, secrets included. Here an input that does not split
// unambiguously into scheme, host and path yields nothing.
//
// Two packages print URLs they did not write: pkg/artifact publishes the
// Git remote in an artifact's source annotation, and pkg/inventory/live
// names the kubeconfig's API server in its errors.
package safeurl
