use super::*;
use crate::generated::{LinkBackend, LinkFlags};

#[test]
fn link_options_set_and_clear_flags() {
    let options = LinkOptions::new().lto(true).no_cache();
    assert_eq!(options.fields.flags, LinkFlags::LTO | LinkFlags::NO_CACHE);
    assert_eq!(options.clone().lto(false).fields.flags, LinkFlags::NO_CACHE);
    assert_eq!(options.flags(LinkFlags::NONE).fields.flags, LinkFlags::NONE);
    let options = LinkOptions::new()
        .backend(LinkBackend::Driver)
        .option("-O3")
        .options(["-lineinfo"]);
    assert_eq!(options.fields.backend, LinkBackend::Driver);
    assert_eq!(options.options, ["-O3", "-lineinfo"]);
    assert_eq!(LinkOptions::new().fields.backend, LinkBackend::Auto);
}
