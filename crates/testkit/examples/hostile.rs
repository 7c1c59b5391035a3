//! Writes the hostile documents of `neardup_testkit::hostile` into a
//! folder, for benchmarks and trying them by hand:
//! `cargo run --release -p neardup-testkit --example hostile -- DIR [GiB]`
//! (the bomb inflates to GiB gibibytes; default 4).

use neardup_testkit::hostile;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "hostile".into()));
    let gib: u64 = args.next().and_then(|g| g.parse().ok()).unwrap_or(4);
    std::fs::create_dir_all(&dir)?;
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("self-drawing-form.pdf", hostile::self_drawing_form("A form that draws itself.")),
        ("form-lattice.pdf", hostile::form_lattice(40, "laugh")),
        ("self-listing-pages.pdf", hostile::self_listing_pages("A page tree that lists itself.")),
        ("deep-page-tree.pdf", hostile::deep_page_tree(100_000)),
        ("flate-bomb.pdf", hostile::flate_bomb(gib << 30, "A bomb.")),
        ("object-stream-bomb.pdf", hostile::object_stream_bomb(gib << 30, "A bomb in an object stream.")),
        ("docx-bomb.docx", hostile::docx_bomb(gib << 30, "A zip bomb.")),
        ("deep.html", hostile::deep_html(1_000_000, "deep")),
        ("normal.pdf", hostile::pdf_saying("A normal paper about near-duplicate detection.")),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), &bytes)?;
        println!("{}\t{} bytes", dir.join(name).display(), bytes.len());
    }
    Ok(())
}
