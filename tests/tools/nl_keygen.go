// nl_keygen: NKeys and JWTs for the nats-lens authentication tests.
//
// Build and run without modules, with Debian's packaged sources
// (golang-github-nats-io-nkeys-dev, golang-github-nats-io-jwt-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run tests/tools/nl_keygen.go CMD DIR
//
// Commands:
//
//	nkey DIR      writes DIR/user.nk (a user seed) and DIR/user.pub (its
//	              public key, for the server's authorization block)
//	operator DIR  an operator, a system account, an account with JetStream
//	              enabled and two of its users: writes DIR/operator.conf
//	              (operator JWT, system account, and both accounts preloaded
//	              into a memory resolver, to include in a server config),
//	              DIR/mon.creds and DIR/app.creds
//
// Everything is generated fresh on each run and is only for tests.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "nl_keygen:", err)
		os.Exit(1)
	}
}

func write(dir, name string, data []byte) {
	fail(os.WriteFile(filepath.Join(dir, name), data, 0600))
}

// userCreds signs a user of the account and returns its .creds file text.
func userCreds(name string, accountPub string, accountKP nkeys.KeyPair) []byte {
	ukp, err := nkeys.CreateUser()
	fail(err)
	upub, err := ukp.PublicKey()
	fail(err)
	useed, err := ukp.Seed()
	fail(err)
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	uc.IssuerAccount = accountPub
	ujwt, err := uc.Encode(accountKP)
	fail(err)
	creds, err := jwt.FormatUserConfig(ujwt, useed)
	fail(err)
	return creds
}

func operator(dir string) {
	okp, err := nkeys.CreateOperator()
	fail(err)
	opub, err := okp.PublicKey()
	fail(err)
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "nl-test-operator"
	ojwt, err := oc.Encode(okp)
	fail(err)

	akp, err := nkeys.CreateAccount()
	fail(err)
	apub, err := akp.PublicKey()
	fail(err)
	ac := jwt.NewAccountClaims(apub)
	ac.Name = "APP"
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{
		MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1,
	}
	ajwt, err := ac.Encode(okp)
	fail(err)

	// JetStream needs a system account in operator mode.
	skp, err := nkeys.CreateAccount()
	fail(err)
	spub, err := skp.PublicKey()
	fail(err)
	sc := jwt.NewAccountClaims(spub)
	sc.Name = "SYS"
	sjwt, err := sc.Encode(okp)
	fail(err)

	conf := fmt.Sprintf("operator: %q\nsystem_account: %s\nresolver: MEMORY\n"+
		"resolver_preload: {\n  %s: %q\n  %s: %q\n}\n",
		ojwt, spub, apub, ajwt, spub, sjwt)
	write(dir, "operator.conf", []byte(conf))
	write(dir, "mon.creds", userCreds("mon", apub, akp))
	write(dir, "app.creds", userCreds("app", apub, akp))
}

func nkey(dir string) {
	ukp, err := nkeys.CreateUser()
	fail(err)
	seed, err := ukp.Seed()
	fail(err)
	pub, err := ukp.PublicKey()
	fail(err)
	write(dir, "user.nk", append(seed, '\n'))
	write(dir, "user.pub", []byte(pub+"\n"))
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: nl_keygen nkey|operator DIR")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "nkey":
		nkey(os.Args[2])
	case "operator":
		operator(os.Args[2])
	default:
		fmt.Fprintln(os.Stderr, "nl_keygen: unknown command", os.Args[1])
		os.Exit(2)
	}
}
