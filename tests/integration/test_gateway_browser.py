"""A real browser against cairn-gateway: headless Chromium from Debian, driven
through chromedriver (python3-selenium), loads pages from another origin (a
second loopback port) that

- fetch() an object up and down across origins with presigned URLs: the
  browser sends its own preflight and enforces the Access-Control-* answers,
  so a bucket whose CORS rules allow the page's origin works and a bucket
  without rules, or with rules for another origin, is refused by the browser
  (AWS: "Configuring cross-origin resource sharing (CORS)", "CORS
  configuration" in the S3 user guide);
- submit an HTML form with a file input, built from boto3's
  generate_presigned_post (SigV4 and SigV2 forms), straight to the bucket:
  the object lands with the file's bytes and the browser shows S3's 201
  PostResponse (AWS: "Browser-based uploads using POST (AWS Signature
  Version 4)", "Creating an HTML form (using AWS Signature Version 4)").
"""
import html
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from s3util import check, run_tests  # noqa: E402
from secutil import accounts  # noqa: E402



class Pages:
    """An HTTP server on 127.0.0.1 (another origin than the gateway) that
    serves the pages the test puts in it."""

    def __init__(self):
        pages = self.pages = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = pages.get(self.path.split("?")[0])
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def put(self, path, html):
        self.pages[path] = html.encode()
        return self.origin + path

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Browser:
    def __init__(self):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        self.profile = tempfile.mkdtemp(prefix="cairn-chromium-")
        opts = Options()
        opts.binary_location = "/usr/bin/chromium"
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--no-first-run", "--user-data-dir=" + self.profile):
            opts.add_argument(a)
        # the driver path is given so Selenium never looks for one on the network
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
        self.driver.set_page_load_timeout(30)

    def title_after(self, url, timeout=30):
        """Loads url and waits until its script sets a title done:... or error:..."""
        self.driver.get(url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            t = self.driver.title
            if t.startswith("done:") or t.startswith("error:"):
                return t
            time.sleep(0.1)
        raise AssertionError("page %s set no result title (title %r)" % (url, self.driver.title))

    def close(self):
        self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)


FETCH_PAGE = """<!doctype html><html><head><title>running</title></head><body><script>
const cfg = %s;
(async () => {
  try {
    const put = await fetch(cfg.put, {method: "PUT", body: cfg.body,
                                      headers: {"Content-Type": "text/plain"}});
    if (!put.ok) throw new Error("PUT answered " + put.status);
    const etag = put.headers.get("ETag");
    const get = await fetch(cfg.get);
    if (!get.ok) throw new Error("GET answered " + get.status);
    const text = await get.text();
    document.title = "done:" + (etag ? "etag" : "no-etag") + ":" + text;
  } catch (e) {
    document.title = "error:" + e;
  }
})();
</script></body></html>"""


def presigned(s3, bucket, key):
    put = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": key,
                                                          "ContentType": "text/plain"},
                                    ExpiresIn=300)
    get = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key},
                                    ExpiresIn=300)
    return put, get


def test_cors_fetch(c):
    pages, browser = PAGES, BROWSER
    s3, _, _ = accounts(c)
    s3.create_bucket(Bucket="web-allowed")
    s3.put_bucket_cors(Bucket="web-allowed", CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": [pages.origin], "AllowedMethods": ["GET", "PUT"],
         "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 60}]})
    put, get = presigned(s3, "web-allowed", "from-browser.txt")
    body = "written by a browser on another origin"
    url = pages.put("/allowed.html", FETCH_PAGE % json.dumps({"put": put, "get": get,
                                                              "body": body}))
    title = browser.title_after(url)
    check(title == "done:etag:" + body, "the browser PUT and read back the object: %r" % title)
    got = s3.get_object(Bucket="web-allowed", Key="from-browser.txt")
    check(got["Body"].read().decode() == body, "the bytes the browser sent are stored")
    check(got["ContentType"] == "text/plain", "with its Content-Type")


def test_cors_refused(c):
    pages, browser = PAGES, BROWSER
    s3, _, _ = accounts(c)
    # no rules at all: the preflight is refused and the browser blocks the PUT
    s3.create_bucket(Bucket="web-none")
    put, get = presigned(s3, "web-none", "k.txt")
    url = pages.put("/none.html", FETCH_PAGE % json.dumps({"put": put, "get": get,
                                                           "body": "x"}))
    title = browser.title_after(url)
    check(title.startswith("error:TypeError"), "no CORS rules: the browser refuses: %r" % title)
    check(s3.list_objects_v2(Bucket="web-none").get("KeyCount") == 0, "and nothing was written")
    # rules for another origin only
    s3.create_bucket(Bucket="web-other")
    s3.put_bucket_cors(Bucket="web-other", CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": ["https://elsewhere.example.com"], "AllowedMethods": ["GET", "PUT"],
         "AllowedHeaders": ["*"]}]})
    put, get = presigned(s3, "web-other", "k.txt")
    url = pages.put("/other.html", FETCH_PAGE % json.dumps({"put": put, "get": get,
                                                            "body": "x"}))
    title = browser.title_after(url)
    check(title.startswith("error:TypeError"), "another origin's rules: refused: %r" % title)
    check(s3.list_objects_v2(Bucket="web-other").get("KeyCount") == 0, "nothing written")
    # GET allowed but not PUT: the read works, the write is refused
    s3.put_object(Bucket="web-other", Key="public.txt", Body=b"readable")
    s3.put_bucket_cors(Bucket="web-other", CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": [pages.origin], "AllowedMethods": ["GET"]}]})
    put, get = presigned(s3, "web-other", "public.txt")
    url = pages.put("/getonly.html", FETCH_PAGE % json.dumps({"put": put, "get": get,
                                                              "body": "overwrite"}))
    title = browser.title_after(url)
    check(title.startswith("error:TypeError"), "PUT not allowed: refused: %r" % title)
    check(s3.get_object(Bucket="web-other", Key="public.txt")["Body"].read() == b"readable",
          "the object was not overwritten")


FORM_PAGE = """<!doctype html><html><head><title>form</title></head><body>
<form id="f" action="%s" method="post" enctype="multipart/form-data">
%s
<input type="file" id="file" name="file">
</form></body></html>"""


def form_upload(c, pages, browser, s3, name, key, data):
    post = s3.generate_presigned_post(
        "web-forms", "uploads/${filename}",
        Fields={"success_action_status": "201", "Content-Type": "text/plain"},
        Conditions=[{"success_action_status": "201"}, ["starts-with", "$key", "uploads/"],
                    {"Content-Type": "text/plain"}, ["content-length-range", 1, 1 << 20]],
        ExpiresIn=300)
    hidden = "\n".join('<input type="hidden" name="%s" value="%s">' % (k, v.replace('"', "&quot;"))
                       for k, v in post["fields"].items())
    url = pages.put("/%s.html" % name, FORM_PAGE % (post["url"], hidden))
    tmp = tempfile.mkdtemp(prefix="cairn-form-")
    path = os.path.join(tmp, key.split("/")[-1])
    with open(path, "wb") as f:
        f.write(data)
    from selenium.webdriver.common.by import By
    browser.driver.get(url)
    browser.driver.find_element(By.ID, "file").send_keys(path)
    browser.driver.find_element(By.ID, "f").submit()
    deadline = time.monotonic() + 30
    while "PostResponse" not in browser.driver.page_source and time.monotonic() < deadline:
        time.sleep(0.1)
    page = browser.driver.page_source
    shutil.rmtree(tmp, ignore_errors=True)
    return post, page


def test_form_post(c):
    pages, browser = PAGES, BROWSER
    s3, _, _ = accounts(c)
    s3.create_bucket(Bucket="web-forms")
    for name, client, key in (
            ("form-v4", s3, "uploads/report-v4.txt"),
            ("form-v2", c.boto(signature_version="s3"), "uploads/report-v2.txt")):
        data = ("a file chosen in a browser form, %s\n" % name).encode() * 50
        post, page = form_upload(c, pages, browser, client, name, key, data)
        if name == "form-v4":
            check("x-amz-signature" in post["fields"], "a SigV4 form: %r" % list(post["fields"]))
        else:
            check("signature" in post["fields"], "a SigV2 form: %r" % list(post["fields"]))
        shown = html.unescape(page)
        check("PostResponse" in shown and ("<Key>%s</Key>" % key) in shown,
              "%s: the browser shows the 201 PostResponse naming the key: %s" % (name, page[:600]))
        got = s3.get_object(Bucket="web-forms", Key=key)
        check(got["Body"].read() == data, "%s: the file's bytes are stored" % name)
        check(got["ContentType"] == "text/plain", "%s: with the form's Content-Type" % name)


PAGES = None
BROWSER = None


def main():
    global PAGES, BROWSER
    PAGES = Pages()
    BROWSER = Browser()
    try:
        run_tests([test_cors_fetch, test_cors_refused, test_form_post])
    finally:
        BROWSER.close()
        PAGES.close()


if __name__ == "__main__":
    main()
