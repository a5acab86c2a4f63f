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
    pub fn new(light_travel_in_world: [f32; 3], ambient: f32) -> Self {
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
                Context::get().create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                    label: Some("overlay pipeline"),
                    layout: Some(&layout),
                    vertex: wgpu::VertexState {
                        module: &shader,
                        entry_point: Some("vs_main"),
                        buffers: &buffers,
                        compilation_options: Default::default(),
                    },
                    fragment: Some(wgpu::FragmentState {
                        module: &shader,
                        entry_point: Some("fs_main"),
                        targets: &[Some(wgpu::ColorTargetState {
                            format: Context::render_format(),
                            blend: Some(wgpu::BlendState::REPLACE),
                            write_mask: wgpu::ColorWrites::ALL,
                        })],
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
                    depth_stencil: Some(wgpu::DepthStencilState {
                        format: Context::depth_format(),
                        depth_write_enabled: Some(true),
                        depth_compare: Some(wgpu::CompareFunction::Less),
                        stencil: wgpu::StencilState::default(),
                        bias: wgpu::DepthBiasState::default(),
                    }),
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

    /// The material registered on this thread, registering it on first use.
    pub fn shared(
        light_travel_in_world: [f32; 3],
        ambient: f32,
    ) -> Rc<RefCell<Box<dyn Material3d>>> {
        MaterialManager3d::get_global_manager(|mm| match mm.get(MATERIAL_NAME) {
            Some(m) => m,
            None => {
                let m: Rc<RefCell<Box<dyn Material3d>>> = Rc::new(RefCell::new(Box::new(
                    OverlayMaterial::new(light_travel_in_world, ambient),
                )));
                mm.add(m.clone(), MATERIAL_NAME);
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
        gpu.object_offset = Some(self.objects.push(&ObjectUniforms {
            transform: transform.to_mat4().to_cols_array_2d(),
            scale: [scale.x, scale.y, scale.z, 1.0],
            color: [c.r, c.g, c.b, 1.0],
            emissive: [e.r, e.g, e.b, 1.0],
        }));
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
