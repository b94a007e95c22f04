//! How the fields of aggregates that are not plain numbers are written in summary.json's
//! mergeable state (`rdbscope merge`): names and keys, which are any bytes.

use crate::text::invisible::is_invisible;
use base64::Engine;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserializer, Serializer};
use std::fmt;

/// Bytes as a JSON string when they are UTF-8 without control, invisible or
/// direction-changing characters (the text shows every byte as it is), else as
/// `{"base64": "…"}`: exact either way, and no hostile key reaches a terminal that shows
/// the file.
pub mod bytes {
    use super::*;

    /// Text that shows the bytes as they are, when there is one.
    fn plain(bytes: &[u8]) -> Option<&str> {
        std::str::from_utf8(bytes)
            .ok()
            .filter(|s| !s.chars().any(|c| c.is_control() || is_invisible(c)))
    }

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match plain(bytes) {
            Some(text) => s.serialize_str(text),
            None => {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(1))?;
                let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
                map.serialize_entry("base64", &encoded)?;
                map.end()
            }
        }
    }

    struct BytesVisitor;

    impl<'de> Visitor<'de> for BytesVisitor {
        type Value = Vec<u8>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string, or {\"base64\": …}")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<u8>, E> {
            Ok(v.as_bytes().to_vec())
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<u8>, A::Error> {
            let mut out = None;
            while let Some(field) = map.next_key::<String>()? {
                if field != "base64" || out.is_some() {
                    return Err(de::Error::custom(format!("unexpected field {field:?}")));
                }
                let text: String = map.next_value()?;
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .map_err(|e| de::Error::custom(format!("base64: {e}")))?;
                out = Some(decoded);
            }
            out.ok_or_else(|| de::Error::missing_field("base64"))
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: From<Vec<u8>>>(d: D) -> Result<T, D::Error> {
        d.deserialize_any(BytesVisitor).map(T::from)
    }

    /// [`deserialize`], refusing empty bytes (a delimiter).
    pub fn deserialize_non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let bytes: Vec<u8> = deserialize(d)?;
        if bytes.is_empty() {
            return Err(de::Error::custom("an empty delimiter"));
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Named {
        #[serde(with = "super::bytes")]
        name: Vec<u8>,
    }

    #[test]
    fn names_round_trip_as_text_or_base64() {
        for (bytes, json) in [
            (&b"user:1"[..], r#"{"name":"user:1"}"#),
            ("é☃\\".as_bytes(), r#"{"name":"é☃\\"}"#),
            (b"a\x1b[31m", r#"{"name":{"base64":"YRtbMzFt"}}"#),
            (b"bin\xff", r#"{"name":{"base64":"Ymlu/w=="}}"#),
            ("a\u{202e}b".as_bytes(), r#"{"name":{"base64":"YeKArmI="}}"#),
        ] {
            let named = Named {
                name: bytes.to_vec(),
            };
            let text = serde_json::to_string(&named).unwrap();
            assert_eq!(text, json);
            assert_eq!(serde_json::from_str::<Named>(&text).unwrap(), named);
        }
        let e = serde_json::from_str::<Named>(r#"{"name":{"hex":"00"}}"#).unwrap_err();
        assert!(e.to_string().contains("unexpected field \"hex\""), "{e}");
    }
}
