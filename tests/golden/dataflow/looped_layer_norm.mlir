// Loom TileProgram of kernel t ()
"builtin.module"() ({
  "func.func"() <{function_type = (memref<64x256xbf16>, memref<64x256xbf16>) -> (), sym_name = "t"}> ({
  ^bb0(%x: memref<64x256xbf16>, %out: memref<64x256xbf16>):
    %tile_m = "loom.sym"() {symbol_ref = @tile_m, kind = "tile", lower_bound = 32 : index, upper_bound = 64 : index, alignment = 32 : index} : () -> index
    %tile_x_d1 = "loom.sym"() {symbol_ref = @tile_x_d1, kind = "tile", lower_bound = 32 : index, upper_bound = 256 : index, alignment = 32 : index} : () -> index
    "loom.grid"() ({
    ^bb0(%tile_m_id: index):
      %s1_init = "loom.full"() {value = 0.0 : f64, shape = ["tile_m"]} : () -> tensor<?xf32>
      %s2_sq_init = "loom.full"() {value = 0.0 : f64, shape = ["tile_m"]} : () -> tensor<?xf32>
      %s1, %s2_sq = "loom.for"(%s1_init, %s2_sq_init) ({
      ^bb0(%tile_x_d1_id: index, %s1_acc: tensor<?xf32>, %s2_sq_acc: tensor<?xf32>):
        %x_tile_chunk = "loom.load"(%x) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (memref<64x256xbf16>) -> tensor<?x?xbf16>
        %row_chunk = "loom.convert"(%x_tile_chunk) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
        %s1_part = "loom.reduce"(%row_chunk) {fn = "sum", axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
        %s1_next = "loom.elementwise"(%s1_acc, %s1_part) {fn = "add"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        %row_sq_chunk = "loom.elementwise"(%row_chunk, %row_chunk) {fn = "mul"} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
        %s2_sq_part = "loom.reduce"(%row_sq_chunk) {fn = "sum", axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
        %s2_sq_next = "loom.elementwise"(%s2_sq_acc, %s2_sq_part) {fn = "add"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        "loom.yield"(%s1_next, %s2_sq_next) : (tensor<?xf32>, tensor<?xf32>) -> ()
      }) {tile = @tile_x_d1, begin = "0", end = "256", trip_count = "ceildiv(256, tile_x_d1)"} : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
      %mu = "loom.elementwise"(%s1) {fn = "mul", scalars = [0.00390625 : f64], scalar_positions = [1]} : (tensor<?xf32>) -> tensor<?xf32>
      %muk = "loom.expand_dims"(%mu) {axis = 1 : i64} : (tensor<?xf32>) -> tensor<?x1xf32>
      %s2_mean_sq = "loom.elementwise"(%s1, %s1) {fn = "mul"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      %s2_shift = "loom.elementwise"(%s2_mean_sq) {fn = "mul", scalars = [0.00390625 : f64], scalar_positions = [1]} : (tensor<?xf32>) -> tensor<?xf32>
      %s2 = "loom.elementwise"(%s2_sq, %s2_shift) {fn = "sub"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      %var = "loom.elementwise"(%s2) {fn = "mul", scalars = [0.00390625 : f64], scalar_positions = [1]} : (tensor<?xf32>) -> tensor<?xf32>
      %vk = "loom.expand_dims"(%var) {axis = 1 : i64} : (tensor<?xf32>) -> tensor<?x1xf32>
      %r = "loom.elementwise"(%vk) {fn = "rsqrt"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
      "loom.for"() ({
      ^bb0(%tile_x_d1_id: index):
        %x_tile_chunk_2 = "loom.load"(%x) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (memref<64x256xbf16>) -> tensor<?x?xbf16>
        %row_chunk_2 = "loom.convert"(%x_tile_chunk_2) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
        %c_chunk = "loom.elementwise"(%row_chunk_2, %muk) {fn = "sub"} : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
        %y_chunk = "loom.elementwise"(%c_chunk, %r) {fn = "mul"} : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
        %yb_chunk = "loom.convert"(%y_chunk) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
        "loom.store"(%yb_chunk, %out) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (tensor<?x?xbf16>, memref<64x256xbf16>) -> ()
        "loom.yield"() : () -> ()
      }) {tile = @tile_x_d1, begin = "0", end = "256", trip_count = "ceildiv(256, tile_x_d1)"} : () -> ()
      "loom.yield"() : () -> ()
    }) {tiles = [@tile_m], extents = [64 : index], num_tiles = ["ceildiv(64, tile_m)"]} : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
