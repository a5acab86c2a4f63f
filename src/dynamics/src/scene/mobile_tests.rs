//! Unit tests of the mobile builder (masses that level every bar, parts below fish, errors).

use super::*;

const TWO_LEVELS: &str = r#"
total_mass_kg = 0.2
nail_in_world_m = [0.0, 0.0, 1.0]
bar_thickness_m = 0.001
bar_height_m = 0.01
[[bar]]
name = "top"
length_m = 0.3
hang_at = 0.4
drop_m = 0.005
left = "a"
right = "low"
[[bar]]
name = "low"
length_m = 0.2
hang_at = 0.5
drop_m = 0.005
left = "b"
right = "c"
[[fish]]
name = "a"
size_m = [0.04, 0.002, 0.03]
drop_m = 0.02
[[fish]]
name = "b"
size_m = [0.03, 0.002, 0.02]
drop_m = 0.02
[[fish]]
name = "c"
size_m = [0.03, 0.002, 0.02]
drop_m = 0.02
"#;

fn def(text: &str) -> MobileDef {
    toml::from_str(text).expect("valid mobile table")
}

/// Σ m (x − x_hang) over everything below each bar's joint is zero: every bar is level.
#[test]
fn every_bar_balances_about_its_hanging_point_and_the_total_is_kept() {
    let m = def(TWO_LEVELS).build().expect("builds");
    assert_eq!(m.parts.len(), 5);
    assert_eq!(m.links.len(), 5);
    assert_eq!(m.links[0].name, "nail");
    assert!(m.links[0].parent.is_none());
    let total: f64 = m.parts.iter().map(|p| p.mass_kg).sum();
    assert!((total - 0.2).abs() < 1e-15);
    // Subtree of a part: itself and everything hanging (transitively) from it.
    let below = |root: &str| -> Vec<&MobilePart> {
        let mut names = vec![root.to_string()];
        let mut k = 0;
        while k < names.len() {
            for l in &m.links {
                if l.parent.as_deref() == Some(names[k].as_str()) {
                    names.push(l.child.clone());
                }
            }
            k += 1;
        }
        m.parts.iter().filter(|p| names.contains(&p.name)).collect()
    };
    for bar in m.parts.iter().filter(|p| p.is_bar) {
        let hang = m.links.iter().find(|l| l.child == bar.name).expect("hangs");
        let moment: f64 = below(&bar.name)
            .iter()
            .map(|p| p.mass_kg * (p.position_in_world_m.x - hang.anchor_in_world_m.x))
            .sum();
        assert!(
            moment.abs() < 1e-15,
            "{}: unbalanced moment {moment}",
            bar.name
        );
    }
    // Bars weigh what their blades weigh; the symmetric lower bar carries equal fish.
    let low = m.parts.iter().find(|p| p.name == "low").expect("low");
    assert!((low.mass_kg - 7850.0 * 0.2 * 0.001 * 0.01).abs() < 1e-15);
    let (b, c) = (
        &m.parts.iter().find(|p| p.name == "b").expect("b"),
        &m.parts.iter().find(|p| p.name == "c").expect("c"),
    );
    assert_eq!(b.mass_kg, c.mass_kg);
    // Joints coincide with the ends of the bars they hang from.
    let top = m.parts.iter().find(|p| p.name == "top").expect("top");
    let a_link = m.links.iter().find(|l| l.child == "a").expect("a");
    assert!(
        (a_link.anchor_in_world_m - (top.position_in_world_m - Vector3::x() * 0.15)).norm() < 1e-15
    );
}

/// A bar carrying a two-plate chain on its left: the plate weighs ρ·volume, the fish
/// below it gets the rest of the left share, and it hangs from the plate's bottom edge.
#[test]
fn a_fish_carries_a_part_below_it_and_passes_the_rest_of_its_mass_down() {
    let text = TWO_LEVELS
        .replace(
            "size_m = [0.04, 0.002, 0.03]\ndrop_m = 0.02",
            "size_m = [0.04, 0.002, 0.03]\ndrop_m = 0.02\nbelow = \"d\"",
        )
        .replace(
            "total_mass_kg = 0.2",
            "total_mass_kg = 0.2\nplate_density_kg_per_m3 = 2700.0",
        )
        + "[[fish]]\nname = \"d\"\nsize_m = [0.02, 0.002, 0.02]\ndrop_m = 0.01\n";
    let m = def(&text).build().expect("builds");
    let part = |n: &str| m.parts.iter().find(|p| p.name == n).expect(n);
    let (top, a, d) = (part("top"), part("a"), part("d"));
    // The top bar's left share, by hand: s·b/L − m_b/2 with s = 0.2, b = 0.18, L = 0.3.
    let bar_mass = 7850.0 * 0.3 * 0.001 * 0.01;
    let left_share = 0.2 * 0.18 / 0.3 - bar_mass / 2.0;
    let plate = 2700.0 * 0.04 * 0.002 * 0.03;
    assert!((a.mass_kg - plate).abs() < 1e-15, "{}", a.mass_kg);
    assert!(
        (d.mass_kg - (left_share - plate)).abs() < 1e-15,
        "{}",
        d.mass_kg
    );
    assert_eq!(top.mass_kg, bar_mass);
    let link = m.links.iter().find(|l| l.child == "d").expect("a-d");
    assert_eq!(link.name, "a-d");
    assert_eq!(link.parent.as_deref(), Some("a"));
    let bottom_of_a = a.position_in_world_m - Vector3::z() * 0.015;
    assert!((link.anchor_in_world_m - bottom_of_a).norm() < 1e-15);
    assert!((d.position_in_world_m - (bottom_of_a - Vector3::z() * 0.02)).norm() < 1e-15);
    let total: f64 = m.parts.iter().map(|p| p.mass_kg).sum();
    assert!((total - 0.2).abs() < 1e-15);

    let unknown = text.replace("below = \"d\"", "below = \"zz\"");
    assert_eq!(
        def(&unknown).build().expect_err("zz").field,
        "mobile.fish[0].below"
    );
    let heavy = text.replace(
        "plate_density_kg_per_m3 = 2700.0",
        "plate_density_kg_per_m3 = 5e6",
    );
    let e = def(&heavy)
        .build()
        .expect_err("plate heavier than its share");
    assert_eq!(e.field, "mobile.total_mass_kg");
    assert!(e.message.contains("fish `a`"), "{e:?}");
}

#[test]
fn uniform_box_inertia() {
    let i = box_inertia(12.0, [1.0, 2.0, 3.0]);
    assert_eq!(i, Vector3::new(13.0, 10.0, 5.0));
}

#[test]
fn bad_descriptions_name_the_field() {
    let cases = [
        (
            TWO_LEVELS.replace("hang_at = 0.4", "hang_at = 1.2"),
            "mobile.bar[0].hang_at",
        ),
        (
            TWO_LEVELS.replace("total_mass_kg = 0.2", "total_mass_kg = 0.01"),
            "mobile.total_mass_kg",
        ),
        (
            TWO_LEVELS.replace("right = \"c\"", "right = \"zz\""),
            "mobile.bar[1].right",
        ),
        (
            TWO_LEVELS.replace("right = \"c\"", "right = \"b\""),
            "mobile.bar[1].right",
        ),
        (
            TWO_LEVELS.replace("name = \"c\"", "name = \"a\""),
            "mobile.fish[2].name",
        ),
        // The scene's name rule: a trailing space would not read back from the CSVs.
        (
            TWO_LEVELS
                .replace("name = \"c\"", "name = \"c \"")
                .replace("right = \"c\"", "right = \"c \""),
            "mobile.fish[2].name",
        ),
    ];
    for (text, field) in cases {
        let e = def(&text).build().expect_err(field);
        assert_eq!(e.field, field, "{e:?}");
        assert!(!e.span.is_empty() || field == "mobile", "{e:?}");
    }
    // A fish hanging from nothing leaves two roots.
    let orphan = format!(
        "{TWO_LEVELS}\n[[fish]]\nname = \"d\"\nsize_m = [0.01, 0.01, 0.01]\ndrop_m = 0.01\n"
    );
    let e = def(&orphan).build().expect_err("two roots");
    assert!(e.message.contains("d"), "{e:?}");
}
