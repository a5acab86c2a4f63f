//! The compositor's own kiss3d material: the video quad and every overlay shape are drawn with
//! one small shader (`overlay.wgsl`): albedo × (ambient + two-sided diffuse from one
//! directional light) + emission, times the object's texture.
//!
//! Why not kiss3d's default PBR `ObjectMaterial`: on Mesa 22's lavapipe (the software Vulkan
//! driver of the machines without a GPU) a shader whose control flow depends on uniform values
//! is re-specialised and recompiled by LLVM at *every* draw, and the compiled code is never
//! freed. The PBR shader is such a shader: it cost about 50 ms and 6 MB per object per frame
//! (the demo ran at 1–2 fps and grew by ~70 MB per frame). This shader has no uniform-dependent
//! branch or loop, so it is compiled once; it is also far cheaper per pixel.
//!
//! How the data of a node maps onto it: `set_color` is the linear albedo (lit),
//! `set_emissive` the linear emission (unlit), `set_texture` multiplies both (kiss3d's default
//! texture is white). The video quad is black albedo, white emission, the video texture:
//! its pixels reach the output unchanged.
//!
//! The same shader has the entry points of three more kinds of draw ([`MaterialKind`]), each
//! registered as a material of its own so that a node's kind is the material it is given:
//! phantoms (depth only: the real arm in front of the virtual bodies), shadow footprints on
//! the desk (alpha only, `min` blending; see [`super::shadow`]) and the one full-view pass that
//! darkens the video by that alpha. Their order in the scene graph is their drawing order.

use super::shadow::{Footprint, MAX_FOOTPRINT_VERTICES};
use kiss3d::camera::Camera3d;
use kiss3d::context::Context;
use kiss3d::glamx::{Pose3, Vec3};
use kiss3d::light::LightCollection;
use kiss3d::resource::vertex_index::VERTEX_INDEX_FORMAT;
use kiss3d::resource::{
    multisample_state, DynamicUniformBuffer, GpuData, GpuMesh3d, Material3d, MaterialManager3d,
    PipelineCache, RenderContext, RenderPhase,
};
use kiss3d::scene::{InstancesBuffer3d, ObjectData3d};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

/// The name under which the material is registered in kiss3d's (thread-local) material manager.
pub const MATERIAL_NAME: &str = "ar-multibody overlay";

/// What a node drawn with the compositor's shader writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaterialKind {
    /// Colour and depth: the video quad and the overlay's shapes.
    Surface,
    /// Depth only ("phantom" geometry): what is real and in the video, such as the digitizer
    /// arm, hides the virtual shapes behind it and lets the video show through.
    Phantom,
    /// A shadow footprint on the desk: its darkening in [0, 1] kept as `1 − darkening` in the
    /// image's alpha with `min` blending, so overlapping footprints do not darken twice. No
    /// depth write; phantoms in front hide it.
    Shadow,
    /// Multiplies the image's colour by its alpha and resets the alpha to 1: applies the
    /// shadows, drawn once over the whole view after the footprints and before the shapes.
    Darken,
}

impl MaterialKind {
    /// The registered name of the material of this kind.
    fn registered_name(self) -> &'static str {
        match self {
            MaterialKind::Surface => MATERIAL_NAME,
            MaterialKind::Phantom => "ar-multibody phantom",
            MaterialKind::Shadow => "ar-multibody shadow",
            MaterialKind::Darken => "ar-multibody darken",
        }
    }

    fn entry_points(self) -> (&'static str, &'static str) {
        match self {
            MaterialKind::Surface | MaterialKind::Phantom => ("vs_main", "fs_main"),
            MaterialKind::Shadow => ("vs_shadow", "fs_shadow"),
            MaterialKind::Darken => ("vs_main", "fs_darken"),
        }
    }

    fn color_target(self) -> wgpu::ColorTargetState {
        let (blend, write_mask) = match self {
            MaterialKind::Surface => (wgpu::BlendState::REPLACE, wgpu::ColorWrites::ALL),
            MaterialKind::Phantom => (wgpu::BlendState::REPLACE, wgpu::ColorWrites::empty()),
            MaterialKind::Shadow => {
                let min = wgpu::BlendComponent {
                    src_factor: wgpu::BlendFactor::One,
                    dst_factor: wgpu::BlendFactor::One,
                    operation: wgpu::BlendOperation::Min,
                };
                (
                    wgpu::BlendState {
                        color: min,
                        alpha: min,
                    },
                    wgpu::ColorWrites::ALPHA,
                )
            }
            MaterialKind::Darken => (
                wgpu::BlendState {
                    color: wgpu::BlendComponent {
                        src_factor: wgpu::BlendFactor::Zero,
                        dst_factor: wgpu::BlendFactor::DstAlpha,
                        operation: wgpu::BlendOperation::Add,
                    },
                    alpha: wgpu::BlendComponent::REPLACE,
                },
                wgpu::ColorWrites::ALL,
            ),
        };
        wgpu::ColorTargetState {
            format: Context::render_format(),
            blend: Some(blend),
            write_mask,
        }
    }

    fn depth_stencil(self) -> wgpu::DepthStencilState {
        let (write, compare) = match self {
            MaterialKind::Surface | MaterialKind::Phantom => (true, wgpu::CompareFunction::Less),
            MaterialKind::Shadow => (false, wgpu::CompareFunction::Less),
            MaterialKind::Darken => (false, wgpu::CompareFunction::Always),
        };
        wgpu::DepthStencilState {
            format: Context::depth_format(),
            depth_write_enabled: Some(write),
            depth_compare: Some(compare),
            stencil: wgpu::StencilState::default(),
            bias: wgpu::DepthBiasState::default(),
        }
    }
}

#[repr(C)]
#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct FrameUniforms {
    view: [[f32; 4]; 4],
    proj: [[f32; 4]; 4],
    light: [f32; 4],
}

#[repr(C)]
#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ObjectUniforms {
    transform: [[f32; 4]; 4],
    scale: [f32; 4],
    color: [f32; 4],
    emissive: [f32; 4],
    // A shadow footprint's edge lines (nx, ny, c, 0) and its (darkening, penumbra width m,
    // 0, 0); zero for other kinds.
    footprint: [[f32; 4]; MAX_FOOTPRINT_VERTICES],
    footprint_params: [f32; 4],
}

/// Per-object GPU state: where its uniforms are this frame, and its texture's bind group.
struct OverlayGpuData {
    object_offset: Option<u32>,
    texture_group: Option<(usize, wgpu::BindGroup)>,
}

impl GpuData for OverlayGpuData {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The material (see the module documentation).
pub struct OverlayMaterial {
    pipeline_cull: PipelineCache,
    pipeline_no_cull: PipelineCache,
    object_layout: wgpu::BindGroupLayout,
    texture_layout: wgpu::BindGroupLayout,
    frame_buffer: wgpu::Buffer,
    frame_group: wgpu::BindGroup,
    objects: DynamicUniformBuffer<ObjectUniforms>,
    object_group: wgpu::BindGroup,
    frame_counter: Cell<u64>,
    last_frame: Cell<u64>,
    light_travel_in_world: [f32; 3],
    ambient: f32,
}

fn uniform_layout_entry(
    dynamic: bool,
    visibility: wgpu::ShaderStages,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: dynamic,
            min_binding_size: None,
        },
        count: None,
    }
}

fn vec3_layout(location: u32) -> wgpu::VertexBufferLayout<'static> {
    let attributes: &'static [wgpu::VertexAttribute] = match location {
        0 => &[wgpu::VertexAttribute {
            offset: 0,
            shader_location: 0,
            format: wgpu::VertexFormat::Float32x3,
        }],
        _ => &[wgpu::VertexAttribute {
            offset: 0,
            shader_location: 1,
            format: wgpu::VertexFormat::Float32x3,
        }],
    };
    wgpu::VertexBufferLayout {
        array_stride: 12,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes,
    }
}

impl OverlayMaterial {
    /// Builds the material (on the thread that owns the kiss3d context). `light_travel_in_world`
    /// is the direction the light travels (normalised here); `ambient` in [0, 1] is the share
    /// of light every surface gets regardless of its orientation.
    pub fn new(light_travel_in_world: [f32; 3], ambient: f32, kind: MaterialKind) -> Self {
        let ctxt = Context::get();
        let both = wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT;
        let frame_layout = ctxt.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("overlay frame layout"),
            entries: &[uniform_layout_entry(false, both)],
        });
        let object_layout = ctxt.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("overlay object layout"),
            entries: &[uniform_layout_entry(true, both)],
        });
        let texture_layout = ctxt.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("overlay texture layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let pipeline_layout = Rc::new(ctxt.create_pipeline_layout(
            &wgpu::PipelineLayoutDescriptor {
                label: Some("overlay pipeline layout"),
                bind_group_layouts: &[
                    Some(&frame_layout),
                    Some(&object_layout),
                    Some(&texture_layout),
                ],
                immediate_size: 0,
            },
        ));
        let shader = Rc::new(
            ctxt.create_shader_module(Some("overlay shader"), include_str!("overlay.wgsl")),
        );
        let build = {
            let layout = pipeline_layout.clone();
            let shader = shader.clone();
            Rc::new(move |cull_mode: Option<wgpu::Face>, sample_count: u32| {
                let uv_layout = wgpu::VertexBufferLayout {
                    array_stride: 8,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &[wgpu::VertexAttribute {
                        offset: 0,
                        shader_location: 2,
                        format: wgpu::VertexFormat::Float32x2,
                    }],
                };
                let buffers = [Some(vec3_layout(0)), Some(vec3_layout(1)), Some(uv_layout)];
                let (vs, fs) = kind.entry_points();
                Context::get().create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                    label: Some("overlay pipeline"),
                    layout: Some(&layout),
                    vertex: wgpu::VertexState {
                        module: &shader,
                        entry_point: Some(vs),
                        buffers: &buffers,
                        compilation_options: Default::default(),
                    },
                    fragment: Some(wgpu::FragmentState {
                        module: &shader,
                        entry_point: Some(fs),
                        targets: &[Some(kind.color_target())],
                        compilation_options: Default::default(),
                    }),
                    primitive: wgpu::PrimitiveState {
                        topology: wgpu::PrimitiveTopology::TriangleList,
                        strip_index_format: None,
                        front_face: wgpu::FrontFace::Ccw,
                        cull_mode,
                        polygon_mode: wgpu::PolygonMode::Fill,
                        unclipped_depth: false,
                        conservative: false,
                    },
                    depth_stencil: Some(kind.depth_stencil()),
                    multisample: multisample_state(sample_count),
                    multiview_mask: None,
                    cache: None,
                })
            })
        };
        let pipeline_cull = PipelineCache::new({
            let build = build.clone();
            move |sc| build(Some(wgpu::Face::Back), sc)
        });
        let pipeline_no_cull = PipelineCache::new(move |sc| build(None, sc));
        let frame_buffer = ctxt.create_buffer(&wgpu::BufferDescriptor {
            label: Some("overlay frame uniforms"),
            size: std::mem::size_of::<FrameUniforms>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let frame_group = ctxt.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("overlay frame group"),
            layout: &frame_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: frame_buffer.as_entire_binding(),
            }],
        });
        let objects = DynamicUniformBuffer::<ObjectUniforms>::new("overlay object uniforms");
        let object_group = Self::object_group(&object_layout, &objects);
        let l = Vec3::from_array(light_travel_in_world).normalize_or(Vec3::NEG_Z);
        Self {
            pipeline_cull,
            pipeline_no_cull,
            object_layout,
            texture_layout,
            frame_buffer,
            frame_group,
            objects,
            object_group,
            frame_counter: Cell::new(0),
            last_frame: Cell::new(u64::MAX),
            light_travel_in_world: l.to_array(),
            ambient: ambient.clamp(0.0, 1.0),
        }
    }

    /// The surface material registered on this thread, registering it on first use.
    pub fn shared(
        light_travel_in_world: [f32; 3],
        ambient: f32,
    ) -> Rc<RefCell<Box<dyn Material3d>>> {
        Self::shared_kind(light_travel_in_world, ambient, MaterialKind::Surface)
    }

    /// The material of `kind` registered on this thread, registering it on first use (the
    /// light of the first registration stays).
    pub fn shared_kind(
        light_travel_in_world: [f32; 3],
        ambient: f32,
        kind: MaterialKind,
    ) -> Rc<RefCell<Box<dyn Material3d>>> {
        let name = kind.registered_name();
        MaterialManager3d::get_global_manager(|mm| match mm.get(name) {
            Some(m) => m,
            None => {
                let m: Rc<RefCell<Box<dyn Material3d>>> = Rc::new(RefCell::new(Box::new(
                    OverlayMaterial::new(light_travel_in_world, ambient, kind),
                )));
                mm.add(m.clone(), name);
                m
            }
        })
    }

    fn object_group(
        layout: &wgpu::BindGroupLayout,
        objects: &DynamicUniformBuffer<ObjectUniforms>,
    ) -> wgpu::BindGroup {
        Context::get().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("overlay object group"),
            layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: objects.buffer(),
                    offset: 0,
                    size: std::num::NonZeroU64::new(objects.aligned_size()),
                }),
            }],
        })
    }
}

impl Material3d for OverlayMaterial {
    fn create_gpu_data(&self) -> Box<dyn GpuData> {
        Box::new(OverlayGpuData {
            object_offset: None,
            texture_group: None,
        })
    }

    fn begin_frame(&mut self) {
        self.frame_counter
            .set(self.frame_counter.get().wrapping_add(1));
        self.objects.clear();
    }

    fn flush(&mut self) {
        if self.objects.flush() {
            self.object_group = Self::object_group(&self.object_layout, &self.objects);
        }
    }

    fn prepare(
        &mut self,
        pass: usize,
        transform: Pose3,
        scale: Vec3,
        camera: &mut dyn Camera3d,
        _lights: &LightCollection,
        data: &ObjectData3d,
        gpu_data: &mut dyn GpuData,
        _viewport_width: u32,
        _viewport_height: u32,
    ) {
        let Some(gpu) = gpu_data.as_any_mut().downcast_mut::<OverlayGpuData>() else {
            return;
        };
        let frame = self.frame_counter.get();
        if frame != self.last_frame.get() {
            self.last_frame.set(frame);
            let (view, proj) = camera.view_transform_pair(pass);
            let [x, y, z] = self.light_travel_in_world;
            let uniforms = FrameUniforms {
                view: view.to_mat4().to_cols_array_2d(),
                proj: proj.to_cols_array_2d(),
                light: [x, y, z, self.ambient],
            };
            Context::get().write_buffer(&self.frame_buffer, 0, bytemuck::bytes_of(&uniforms));
        }
        let c = data.color();
        let e = data.emissive();
        let mut uniforms = ObjectUniforms {
            transform: transform.to_mat4().to_cols_array_2d(),
            scale: [scale.x, scale.y, scale.z, 1.0],
            color: [c.r, c.g, c.b, 1.0],
            emissive: [e.r, e.g, e.b, 1.0],
            footprint: [[0.0; 4]; MAX_FOOTPRINT_VERTICES],
            footprint_params: [0.0; 4],
        };
        if let Some(f) = data.user_data().downcast_ref::<Footprint>() {
            for (row, [nx, ny, c]) in uniforms.footprint.iter_mut().zip(f.edge_lines()) {
                *row = [nx, ny, c, 0.0];
            }
            uniforms.footprint_params = [f.darkening, f.penumbra_m, 0.0, 0.0];
        }
        gpu.object_offset = Some(self.objects.push(&uniforms));
    }

    fn render(
        &mut self,
        _pass: usize,
        _transform: Pose3,
        _scale: Vec3,
        _camera: &mut dyn Camera3d,
        _lights: &LightCollection,
        data: &ObjectData3d,
        mesh: &mut GpuMesh3d,
        _instances: &mut InstancesBuffer3d,
        gpu_data: &mut dyn GpuData,
        render_pass: &mut wgpu::RenderPass<'_>,
        context: &RenderContext,
    ) {
        if context.phase != RenderPhase::Opaque || !data.surface_rendering_active() {
            return;
        }
        let Some(gpu) = gpu_data.as_any_mut().downcast_mut::<OverlayGpuData>() else {
            return;
        };
        let Some(offset) = gpu.object_offset else {
            return;
        };
        let texture = data.texture();
        let key = Arc::as_ptr(texture) as usize;
        if gpu.texture_group.as_ref().is_none_or(|(k, _)| *k != key) {
            let group = Context::get().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("overlay texture group"),
                layout: &self.texture_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: wgpu::BindingResource::TextureView(&texture.view),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::Sampler(&texture.sampler),
                    },
                ],
            });
            gpu.texture_group = Some((key, group));
        }
        for buf in [mesh.coords(), mesh.normals()] {
            if let Ok(mut b) = buf.write() {
                b.load_to_gpu();
            }
        }
        if let Ok(mut b) = mesh.uvs().write() {
            b.load_to_gpu();
        }
        if let Ok(mut b) = mesh.faces().write() {
            b.load_to_gpu();
        }
        let (Some(coords), Some(normals), Some(uvs), Some(faces)) = (
            mesh.coords_buffer(),
            mesh.normals_buffer(),
            mesh.uvs_buffer(),
            mesh.faces_buffer(),
        ) else {
            return;
        };
        let Some((_, texture_group)) = gpu.texture_group.as_ref() else {
            return;
        };
        let pipeline = if data.backface_culling_enabled() {
            self.pipeline_cull.get(context.sample_count)
        } else {
            self.pipeline_no_cull.get(context.sample_count)
        };
        render_pass.set_pipeline(&pipeline);
        render_pass.set_bind_group(0, &self.frame_group, &[]);
        render_pass.set_bind_group(1, &self.object_group, &[offset]);
        render_pass.set_bind_group(2, texture_group, &[]);
        render_pass.set_vertex_buffer(0, coords.slice(..));
        render_pass.set_vertex_buffer(1, normals.slice(..));
        render_pass.set_vertex_buffer(2, uvs.slice(..));
        render_pass.set_index_buffer(faces.slice(..), VERTEX_INDEX_FORMAT);
        render_pass.draw_indexed(0..mesh.num_indices(), 0, 0..1);
    }
}
