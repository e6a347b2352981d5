package render

// accelc-pod-admission's rules written as one of its match conditions,
// so that the API server evaluates the policy once for a pod that breaks
// none of them.

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// ruleCondition is the policy's rules (a validation's expression over
// its variables) as a match condition that holds where a pod breaks one:
// the API server evaluates a policy's match conditions first and, where
// one is false, nothing else of it; but it evaluates a validation's
// message expression whether or not the validation holds, and each of a
// policy's match conditions, validations, messages and audit
// annotations in an activation of its own (the pod, its parameter, the
// request and its namespace converted again for each). Written as a
// match condition, a pod that breaks no rule costs one activation and
// one evaluation of the rules, not four and two: on a 1.36 API server
// about half of the policy's cost a pod.
//
// A match condition cannot read the policy's variables (the API server
// compiles match conditions without them), so each variable the rules
// read is bound where the condition starts ([value].all(v_name, ...): a
// list of one, whose all() is the body's value), once, as the variable
// was evaluated once. A bound variable is evaluated even where no rule
// that reads it is reached, so one whose evaluation can fail where the
// rules that read it would not be reached is written in where it is
// read instead (lazyVariables).
// False where the condition outgrows CELExpressionLimit (a fleet's
// entitlements, written in whole): the rules then stay the validation.
func ruleCondition(variables []admissionregistrationv1.Variable, rules string) (string, bool) {
	expr := map[string]string{}
	for _, v := range variables {
		expr[v.Name] = v.Expression
	}
	read := map[string]bool{}
	var visit func(string)
	visit = func(e string) {
		for _, m := range variableRef.FindAllStringSubmatch(e, -1) {
			if !read[m[1]] {
				read[m[1]] = true
				visit(expr[m[1]])
			}
		}
	}
	visit(rules)
	var write func(string) string
	write = func(e string) string {
		return variableRef.ReplaceAllStringFunc(e, func(ref string) string {
			name := strings.TrimPrefix(ref, "variables.")
			if lazyVariables[name] {
				return "(" + write(expr[name]) + ")"
			}
			return "v_" + name
		})
	}
	body := write(rules)
	for i := len(variables) - 1; i >= 0; i-- {
		if name := variables[i].Name; read[name] && !lazyVariables[name] {
			body = fmt.Sprintf("[%s].all(v_%s, %s)", write(variables[i].Expression), name, body)
		}
	}
	body = "!(" + body + ")"
	return body, utf8.RuneCountInString(body) <= CELExpressionLimit
}

// variableRef is a CEL reference to a policy's variable.
var variableRef = regexp.MustCompile(`\bvariables\.([A-Za-z_][A-Za-z0-9_]*)\b`)

// lazyVariables are the variables ruleCondition writes in where they are
// read rather than binding them: amount converts the pod's quantity of
// the profile's resource to a number, which only the rules of a profile
// with a count reach.
var lazyVariables = map[string]bool{"amount": true}
