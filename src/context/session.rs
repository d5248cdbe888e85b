//! The requests of one pull: every one a GET, each failure sorted into what the pull may go on
//! after (the API server's own answer, such as 403 or 404) and what ends it (no connection, no
//! answer in time, failed authentication).

use super::PullError;
use super::connect::Connected;
use kube::api::ListParams;
use serde::Deserialize;
use serde_json::Value;
use std::cell::RefCell;
use std::time::Duration;

/// Why a request gave nothing.
pub enum Failure {
    /// The API server answered with an error status.
    Api { code: u16, message: String },
    /// The pull cannot go on.
    Fatal(PullError),
}

pub struct Session {
    pub conn: Connected,
    request_timeout: Duration,
    /// The request under way (`GET /path`): what a pull that ran out of time was waiting for.
    current: RefCell<String>,
}

/// One page of a list.
#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    metadata: PageMeta,
    /// An empty list, whether `[]`, `null` or absent.
    #[serde(default)]
    items: Option<Vec<Value>>,
}

#[derive(Default, Deserialize)]
struct PageMeta {
    #[serde(rename = "continue", default)]
    next: Option<String>,
}

impl Session {
    pub fn new(conn: Connected, request_timeout: Duration) -> Self {
        Session {
            conn,
            request_timeout,
            current: RefCell::new(String::new()),
        }
    }

    /// The request under way, or the last one made.
    pub fn current(&self) -> String {
        self.current.borrow().clone()
    }

    /// Runs one request (`shown`: `GET /path`), remembering it while it runs.
    pub async fn call<T>(
        &self,
        shown: String,
        request: impl Future<Output = kube::Result<T>>,
    ) -> Result<T, Failure> {
        *self.current.borrow_mut() = shown.clone();
        request.await.map_err(|e| self.failure(shown, e))
    }

    /// Every object of a collection, `page_size` at a time (`limit`, then `continue` until the
    /// server gives no more).
    pub async fn list(&self, path: &str, page_size: u32) -> Result<Vec<Value>, Failure> {
        self.list_selected(path, page_size, &ListParams::default())
            .await
    }

    /// [`Self::list`] of the objects a label or field selector of `select` picks.
    pub async fn list_selected(
        &self,
        path: &str,
        page_size: u32,
        select: &ListParams,
    ) -> Result<Vec<Value>, Failure> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut params = select.clone().limit(page_size);
            if let Some(t) = &token {
                params = params.continue_token(t);
            }
            let request = kube::core::Request::new(path)
                .list(&params)
                .map_err(|e| self.fatal(path, e.to_string()))?;
            let page: Page = self
                .call(format!("GET {path}"), self.conn.client.request(request))
                .await?;
            items.extend(page.items.unwrap_or_default());
            match page.metadata.next {
                Some(t) if !t.is_empty() && token.as_ref() != Some(&t) => token = Some(t),
                _ => return Ok(items),
            }
        }
    }

    fn fatal(&self, path: &str, reason: String) -> Failure {
        Failure::Fatal(PullError::Request {
            server: self.conn.server.clone(),
            request: format!("GET {path}"),
            reason,
        })
    }

    fn failure(&self, request: String, e: kube::Error) -> Failure {
        if let kube::Error::Api(status) = e {
            return Failure::Api {
                code: status.code,
                message: status.message.clone(),
            };
        }
        Failure::Fatal(PullError::Request {
            server: self.conn.server.clone(),
            request,
            reason: reason(&e, self.request_timeout),
        })
    }
}

/// What went wrong below the client: a request timeout said as such, else the innermost I/O
/// error (`Connection refused`), else the client's own message.
fn reason(e: &kube::Error, limit: Duration) -> String {
    let mut io: Option<&std::io::Error> = None;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(i) = s.downcast_ref::<std::io::Error>() {
            if i.kind() == std::io::ErrorKind::TimedOut {
                return format!(
                    "no answer within {}s (--request-timeout)",
                    limit.as_secs_f64()
                );
            }
            io = Some(i);
        }
        source = s.source();
    }
    match io {
        Some(i) => i.to_string(),
        None => e.to_string(),
    }
}
