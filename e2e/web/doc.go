// Package e2eweb holds the end-to-end tests of the web page at /ui: a real
// `approvalbot serve`, headless Chromium (Debian's chromium package) driven
// with chromedp, and clients waiting on the API for the decisions made by
// clicking in the page. It measures the time from a submit to the page
// showing the call and the page's weight, and saves screenshots at 360 px
// and 1280 px (to $APPROVALBOT_E2E_SCREENSHOTS, else a temporary
// directory the test logs). It runs only with the e2e build tag:
//
//	go test -tags e2e -v ./e2e/web/
package e2eweb
