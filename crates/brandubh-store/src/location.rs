//! `--run LOCATION`: a directory or a store URL, parsed into a [`Location`].

use std::fmt;
use std::path::PathBuf;

/// Where a run lives.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A local directory (a plain path or `file:///…`).
    Local(PathBuf),
    /// An in-memory store (`memory://`, for tests): gone when the process ends.
    Memory,
    /// An S3 or S3-compatible bucket (`s3://bucket/prefix`).
    S3 {
        /// The bucket.
        bucket: String,
        /// The run's prefix in the bucket (may be empty).
        prefix: String,
    },
    /// A Google Cloud Storage bucket (`gs://bucket/prefix`).
    Gcs {
        /// The bucket.
        bucket: String,
        /// The run's prefix in the bucket (may be empty).
        prefix: String,
    },
    /// An Azure Blob Storage container (`az://container/prefix`).
    Azure {
        /// The container.
        container: String,
        /// The run's prefix in the container (may be empty).
        prefix: String,
    },
}

/// Why a location was refused; the message names it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("run location {location}: {reason}")]
pub struct LocationError {
    /// The location as given, without any credentials it held.
    pub location: String,
    /// What is wrong.
    pub reason: String,
}

const SCHEMES: &str = "a directory, file:///DIR, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://CONTAINER/PREFIX or memory://";

impl Location {
    /// Parses `--run LOCATION`: anything without `SCHEME://` is a directory.
    pub fn parse(text: &str) -> Result<Location, LocationError> {
        let Some((scheme, rest)) = text.split_once("://") else {
            if text.is_empty() {
                return Err(refuse(text, "empty"));
            }
            return Ok(Location::Local(PathBuf::from(text)));
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        if authority.contains('@') {
            return Err(refuse(
                text,
                "credentials in the URL are not accepted: give them in the environment (docs/guide/distributed.md)",
            ));
        }
        let prefix = clean_prefix(text, path)?;
        let bucket = |what: &str| -> Result<String, LocationError> {
            if authority.is_empty() {
                return Err(refuse(
                    text,
                    &format!("no {what} (e.g. {scheme}://{what}/run)"),
                ));
            }
            if !authority
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
            {
                return Err(refuse(text, &format!("invalid {what} name {authority:?}")));
            }
            Ok(authority.to_owned())
        };
        match scheme.to_ascii_lowercase().as_str() {
            "file" => {
                if !authority.is_empty() && authority != "localhost" {
                    return Err(refuse(
                        text,
                        "a file URL needs an absolute path: file:///DIR",
                    ));
                }
                if path.is_empty() {
                    return Err(refuse(text, "no directory"));
                }
                Ok(Location::Local(PathBuf::from(format!("/{path}"))))
            }
            "memory" => Ok(Location::Memory),
            "s3" | "s3a" => Ok(Location::S3 {
                bucket: bucket("bucket")?,
                prefix,
            }),
            "gs" => Ok(Location::Gcs {
                bucket: bucket("bucket")?,
                prefix,
            }),
            "az" | "abfs" => Ok(Location::Azure {
                container: bucket("container")?,
                prefix,
            }),
            other => Err(refuse(
                text,
                &format!("unknown scheme {other:?}: expected {SCHEMES}"),
            )),
        }
    }

    /// How messages name the object `key` of this location: a path for a directory,
    /// `URL/KEY` otherwise.
    #[must_use]
    pub fn name_of(&self, key: &str) -> String {
        match self {
            Location::Local(dir) => dir.join(key).display().to_string(),
            Location::Memory => format!("memory://{key}"),
            other => format!("{other}/{key}"),
        }
    }

    /// Whether this is a local directory.
    #[must_use]
    pub fn is_local(&self) -> bool {
        matches!(self, Location::Local(_))
    }
}

/// The display form is the URL (a path for a directory): it never holds credentials.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let with = |f: &mut fmt::Formatter<'_>, scheme: &str, b: &str, p: &str| {
            if p.is_empty() {
                write!(f, "{scheme}://{b}")
            } else {
                write!(f, "{scheme}://{b}/{p}")
            }
        };
        match self {
            Location::Local(dir) => write!(f, "{}", dir.display()),
            Location::Memory => write!(f, "memory://"),
            Location::S3 { bucket, prefix } => with(f, "s3", bucket, prefix),
            Location::Gcs { bucket, prefix } => with(f, "gs", bucket, prefix),
            Location::Azure { container, prefix } => with(f, "az", container, prefix),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({self})")
    }
}

fn refuse(text: &str, reason: &str) -> LocationError {
    LocationError {
        location: without_userinfo(text),
        reason: reason.to_owned(),
    }
}

/// `text` with anything between `://` and `@` (user name, password) replaced.
fn without_userinfo(text: &str) -> String {
    match text.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://…@{host}/{path}"),
                None => text.to_owned(),
            }
        }
        None => text.to_owned(),
    }
}

/// `text` with the credentials of every URL in it replaced by `***`: the user name and
/// password (`http://user:pass@host/` becomes `http://***@host/`) and the values of query
/// parameters that carry secrets (signatures, credentials, tokens, keys, passwords, SAS
/// signatures, `X-Amz-*` and `X-Goog-*`). Every store error and retry line passes through
/// it, so an endpoint URL with credentials in it (`AWS_ENDPOINT_URL`) is never printed.
#[must_use]
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || "\"'<>()[]{},`".contains(c))
            .unwrap_or(after.len());
        out.push_str(&redact_url_tail(&after[..end]));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// A URL after its `scheme://`, redacted (see [`redact`]).
fn redact_url_tail(url: &str) -> String {
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, path) = url.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_owned(),
    };
    let Some((before_query, query)) = path.split_once('?') else {
        return authority + path;
    };
    let (query, fragment) = query
        .split_once('#')
        .map_or((query, None), |(q, f)| (q, Some(f)));
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if secret_parameter(name) => format!("{name}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    let mut out = format!("{authority}{before_query}?{}", pairs.join("&"));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// Whether a query parameter's name says it carries a secret.
fn secret_parameter(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.starts_with("x-amz-")
        || name.starts_with("x-goog-")
        || [
            "sig",
            "signature",
            "cred",
            "token",
            "secret",
            "password",
            "passwd",
            "pwd",
            "key",
            "auth",
            "session",
        ]
        .iter()
        .any(|s| name.contains(s))
}

/// The prefix without leading or trailing slashes; no empty, `.` or `..` segments.
fn clean_prefix(text: &str, path: &str) -> Result<String, LocationError> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    for segment in trimmed.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(refuse(text, &format!("bad path segment {segment:?}")));
        }
        if segment.chars().any(char::is_control) {
            return Err(refuse(text, "control characters in the path"));
        }
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_urls_parse() {
        assert_eq!(
            Location::parse("runs/x").unwrap(),
            Location::Local("runs/x".into())
        );
        assert_eq!(
            Location::parse("file:///tmp/run").unwrap(),
            Location::Local("/tmp/run".into())
        );
        assert_eq!(Location::parse("memory://").unwrap(), Location::Memory);
        let s3 = Location::parse("s3://bucket/runs/a/").unwrap();
        assert_eq!(
            s3,
            Location::S3 {
                bucket: "bucket".into(),
                prefix: "runs/a".into()
            }
        );
        assert_eq!(s3.to_string(), "s3://bucket/runs/a");
        assert_eq!(s3.name_of("latest"), "s3://bucket/runs/a/latest");
        assert_eq!(Location::Memory.name_of("latest"), "memory://latest");
        assert_eq!(
            Location::parse("runs/x").unwrap().name_of("latest"),
            "runs/x/latest"
        );
        assert_eq!(Location::parse("gs://b").unwrap().to_string(), "gs://b");
        assert_eq!(Location::parse("az://c/p").unwrap().to_string(), "az://c/p");
    }

    #[test]
    fn bad_locations_get_one_line_errors() {
        for (text, needle) in [
            ("ftp://host/x", "unknown scheme \"ftp\""),
            ("s3://", "no bucket"),
            ("s3:///prefix", "no bucket"),
            ("gs://", "no bucket"),
            ("az://", "no container"),
            ("s3://b/a/../c", "bad path segment"),
            ("s3://b/a//c", "bad path segment"),
            ("s3://bu cket/x", "invalid bucket name"),
            ("file://host/x", "absolute path"),
            ("", "empty"),
        ] {
            let e = Location::parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn credentials_are_taken_out_of_every_url() {
        let text = "error sending request for url (http://user:hunter2@127.0.0.1:9/b/k?list-type=2&X-Amz-Signature=abc&sig=def&prefix=chunks), see https://plain.example/x and s3://K:S@bucket/p";
        let clean = redact(text);
        assert_eq!(
            clean,
            "error sending request for url (http://***@127.0.0.1:9/b/k?list-type=2&X-Amz-Signature=***&sig=***&prefix=chunks), see https://plain.example/x and s3://***@bucket/p"
        );
        assert_eq!(redact("no url here"), "no url here");
        assert_eq!(redact("http://h?token=t#frag"), "http://h?token=***#frag");
    }

    #[test]
    fn credentials_in_a_url_are_refused_and_not_repeated() {
        let e = Location::parse("s3://AKIDSECRET:hunter2@bucket/x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("credentials in the URL"), "{e}");
        assert!(!e.contains("hunter2") && !e.contains("AKIDSECRET"), "{e}");
    }
}
