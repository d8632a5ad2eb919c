module approvalbot

go 1.26.8

require (
	github.com/go-telegram-bot-api/telegram-bot-api/v5 v5.5.1 // indirect
	github.com/gobwas/glob v1.1.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/kelseyhightower/envconfig v1.4.0 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/slack-go/slack v0.35.0 // indirect
	github.com/tailscale/hujson v0.0.0-20260727124030-b80ff77dac4f // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.47.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)
