//! The bodies' mesh visuals, read when the rig loads a scene (never per frame): each file once
//! per path and scale, however many visuals name it, shared by every snapshot.

use super::SimulationError;
use crate::compositor::mesh::{MeshGeometry, SharedMesh};
use ar_dynamics::model::visual::VisualGeometry;
use ar_dynamics::SceneSimulation;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Each body's loaded mesh visuals, in the order of its visuals (`None` for a primitive); an
/// error names the body, the path tried and the cause.
pub(super) fn load(
    sim: &SceneSimulation,
) -> Result<Vec<Arc<[Option<SharedMesh>]>>, SimulationError> {
    let mut read: HashMap<(PathBuf, [u64; 3]), SharedMesh> = HashMap::new();
    sim.bodies()
        .iter()
        .map(|body| {
            body.visuals
                .iter()
                .map(|v| {
                    let VisualGeometry::Mesh { path, scale } = &v.geometry else {
                        return Ok(None);
                    };
                    let key = (path.clone(), scale.map(f64::to_bits));
                    if let Some(mesh) = read.get(&key) {
                        return Ok(Some(mesh.clone()));
                    }
                    let mesh = MeshGeometry::load(path, *scale).map_err(|e| {
                        SimulationError(format!("body \"{}\": mesh visual: {e}", body.name))
                    })?;
                    let mesh = SharedMesh::new(mesh);
                    read.insert(key, mesh.clone());
                    Ok(Some(mesh))
                })
                .collect()
        })
        .collect()
}
