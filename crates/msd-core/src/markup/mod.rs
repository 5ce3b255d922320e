//! The markup of content files: [`markers`] (`<!-- msd:... -->` sections, protected text,
//! fences), [`when`] (the closed `when=` grammar), [`frontmatter`] (YAML frontmatter).

pub mod frontmatter;
pub mod markers;
pub mod when;
