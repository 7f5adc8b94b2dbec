//! Media references as ctxd keeps them (`Part::Media`): a URL, a provider's file URI, or
//! a `data:` URI holding the bytes. The readers (`ingest`) make them from a provider's
//! image blocks and the renderers (`render`) take them apart again.

/// A `data:` URI for base64 bytes, as ctxd keeps inline media.
pub(crate) fn data_uri(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

/// Where a media reference's bytes are, for a provider that takes them inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source<'a> {
    /// A base64 `data:` URI: its declared media type (else the part's), and its data.
    Base64 { media_type: &'a str, data: &'a str },
    /// Not a `data:` URI: a URL or a provider's file URI, to send as it is.
    Reference(&'a str),
    /// A `data:` URI that is not base64, which no provider takes inline.
    Unsupported,
}

/// Where the bytes of the media at `uri` (of type `mime_type`) are.
pub(crate) fn source<'a>(uri: &'a str, mime_type: &'a str) -> Source<'a> {
    let Some(rest) = uri.strip_prefix("data:") else {
        return Source::Reference(uri);
    };
    let Some((header, data)) = rest.split_once(',') else {
        return Source::Unsupported;
    };
    let Some(declared) = header.strip_suffix(";base64") else {
        return Source::Unsupported;
    };
    Source::Base64 {
        media_type: if declared.is_empty() {
            mime_type
        } else {
            declared
        },
        data,
    }
}

/// The media type of an image reference: the type a `data:` URI declares, else the one
/// its file extension names, else `image/*` (an image of unknown type).
pub(crate) fn image_type(uri: &str) -> String {
    if let Some(rest) = uri.strip_prefix("data:") {
        let declared = rest.split([';', ',']).next().unwrap_or_default();
        if is_media_type(declared) {
            return declared.to_ascii_lowercase();
        }
        return "image/*".to_string();
    }
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let name = path.rsplit('/').next().unwrap_or_default();
    let extension = name
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase());
    match extension.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => "image/*",
    }
    .to_string()
}

fn is_media_type(text: &str) -> bool {
    let Some((kind, sub)) = text.split_once('/') else {
        return false;
    };
    let token = |part: &str| {
        !part.is_empty()
            && part.len() <= 64
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    token(kind) && token(sub)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_types_come_from_data_uris_then_extensions() {
        assert_eq!(image_type("data:image/png;base64,QUJD"), "image/png");
        assert_eq!(image_type("data:IMAGE/JPEG,raw"), "image/jpeg");
        assert_eq!(image_type("data:;base64,QUJD"), "image/*");
        assert_eq!(
            image_type("https://x.test/a/b.JPG?size=2#top"),
            "image/jpeg"
        );
        assert_eq!(image_type("https://x.test/a.webp"), "image/webp");
        assert_eq!(image_type("https://x.test/image"), "image/*");
        assert_eq!(image_type("file_123"), "image/*");
    }

    #[test]
    fn sources_split_base64_data_uris_from_references() {
        assert_eq!(
            source("data:image/png;base64,QUJD", "image/*"),
            Source::Base64 {
                media_type: "image/png",
                data: "QUJD"
            }
        );
        assert_eq!(
            source("data:;base64,QUJD", "image/gif"),
            Source::Base64 {
                media_type: "image/gif",
                data: "QUJD"
            }
        );
        assert_eq!(
            source("data:image/png,raw", "image/png"),
            Source::Unsupported
        );
        assert_eq!(source("data:image/png", "image/png"), Source::Unsupported);
        assert_eq!(
            source("gs://bucket/a.jpg", "image/jpeg"),
            Source::Reference("gs://bucket/a.jpg")
        );
    }

    proptest::proptest! {
        #[test]
        fn any_uri_is_typed_and_base64_data_comes_back_whole(uri in "\\PC{0,80}") {
            proptest::prop_assert!(image_type(&uri).contains('/'));
            let data = data_uri("image/png", &uri);
            proptest::prop_assert_eq!(
                source(&data, "image/*"),
                Source::Base64 { media_type: "image/png", data: &uri }
            );
        }
    }
}
