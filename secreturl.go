package main

// This file recognises the secrets a URL can hold (a password, a token in
// its query), so that one rule decides both which files must be private
// (0600, never in a committable .workspace.json) and what every output
// redacts.

import (
	"net/url"
	"strings"
)

// urlHoldsSecret reports whether a URL holds credentials: what redactURL
// hides is what the files that hold the URL keep private (0600, out of
// git) — one rule for both.
func urlHoldsSecret(s string) bool {
	return redactURL(s) != s
}

// secretQueryKey reports whether a URL's query parameter k carries a
// credential: ntfy's auth, a token, an access_token, a key, a signature.
func secretQueryKey(k string) bool {
	k = strings.ToLower(k)
	switch k {
	case "key", "sig", "signature", "pass", "pwd":
		return true
	}
	for _, part := range []string{"auth", "token", "secret", "password", "apikey", "api_key"} {
		if strings.Contains(k, part) {
			return true
		}
	}
	return false
}

// redactURL hides a URL's credentials, which must never reach logs or
// output: its user information, and the values of query parameters that
// carry one (ntfy's ?auth=, a token=).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.Index(s, "@"); i >= 0 && strings.Contains(s[:i], "://") {
			return s[:strings.Index(s, "://")+3] + "xxxxx@" + s[i+1:]
		}
		return s
	}
	changed := false
	if u.User != nil {
		u.User = url.User("xxxxx")
		changed = true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if secretQueryKey(k) {
				q[k] = []string{"xxxxx"}
				changed = true
			}
		}
		u.RawQuery = q.Encode()
	}
	if !changed {
		return s // as given: re-encoding would change what the user sees
	}
	return u.String()
}
