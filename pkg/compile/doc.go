// Package compile turns a cluster directory of CUE into a typed Model.
//
// It loads the directory's CUE package (with its module's imports, so a
// fleet repository can share teams, profiles and catalog extensions across
// clusters), unifies it with the embedded schema, decodes the result, merges
// catalog extensions into the built-in catalog and checks every reference
// (profiles, teams, node pins) against that catalog. Check then compares the
// model with a node inventory. Every diagnostic names the file:line:col it
// is about, relative to the working directory, and says what to do.
package compile
