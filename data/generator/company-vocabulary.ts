/**
 * Where drug companies are and who supervises them: the cities companies are
 * registered in, the parts their (fictional) names are built from, and the
 * supervision units (national bodies plus one drug administration per province).
 */

export interface City {
  /** Short name, as it starts a company name: 南京. */
  name: string;
  /** 江苏省; for a municipality the city itself: 北京市. */
  province: string;
  districts: string[];
}

/** "城市:省份:区,区,…" */
export const CITIES: City[] = [
  "北京:北京市:大兴区,昌平区,海淀区,亦庄经济技术开发区",
  "上海:上海市:浦东新区,闵行区,奉贤区,金山区",
  "天津:天津市:滨海新区,西青区,北辰区",
  "重庆:重庆市:渝北区,巴南区,北碚区",
  "石家庄:河北省:长安区,栾城区,高新技术产业开发区",
  "太原:山西省:小店区,晋源区",
  "沈阳:辽宁省:浑南区,铁西区,沈北新区",
  "长春:吉林省:朝阳区,净月高新技术产业开发区",
  "通化:吉林省:东昌区,二道江区",
  "哈尔滨:黑龙江省:南岗区,香坊区,利民开发区",
  "南京:江苏省:江宁区,栖霞区,浦口区",
  "苏州:江苏省:工业园区,吴中区,相城区",
  "连云港:江苏省:海州区,连云区",
  "泰州:江苏省:海陵区,医药高新技术产业开发区",
  "杭州:浙江省:滨江区,余杭区,钱塘区",
  "台州:浙江省:椒江区,黄岩区,临海市",
  "金华:浙江省:婺城区,金东区",
  "合肥:安徽省:蜀山区,包河区,经济技术开发区",
  "亳州:安徽省:谯城区",
  "厦门:福建省:海沧区,翔安区",
  "南昌:江西省:青山湖区,新建区",
  "济南:山东省:历下区,章丘区,高新区",
  "青岛:山东省:崂山区,黄岛区",
  "临沂:山东省:兰山区,罗庄区",
  "郑州:河南省:金水区,二七区,航空港区",
  "武汉:湖北省:东湖新技术开发区,江夏区,汉阳区",
  "长沙:湖南省:岳麓区,雨花区,浏阳市",
  "广州:广东省:黄埔区,白云区,番禺区",
  "深圳:广东省:南山区,坪山区,龙岗区",
  "珠海:广东省:香洲区,金湾区",
  "南宁:广西壮族自治区:西乡塘区,江南区",
  "桂林:广西壮族自治区:七星区,临桂区",
  "成都:四川省:温江区,双流区,高新区",
  "贵阳:贵州省:乌当区,观山湖区",
  "昆明:云南省:官渡区,呈贡区",
  "西安:陕西省:雁塔区,未央区,高新区",
  "兰州:甘肃省:城关区,七里河区",
].map((line) => {
  const [name = "", province = "", districts = ""] = line.split(":");
  return { name, province, districts: districts.split(",") };
});

/** Characters company brands are made of, two at a time (恒康, 瑞华, …). */
export const BRAND_CHARACTERS = [
  ..."恒康瑞华泰安宁德仁济民生健和信诚元正中天海润丰盛达远鸿福新博益嘉美凯宝通立科金百春晨汇隆昌辰普惠",
];

/** Characters trade names are made of (琦玥, 络欣, …). */
export const TRADE_NAME_CHARACTERS = [..."琦玥欣舒畅倍乐诺维优思可必迪捷怡沁清润宜安泰康瑞立达力信顺佳络宁平贝奥赛妥"];

export const COMPANY_SUFFIXES = [
  "制药有限公司",
  "药业有限公司",
  "药业股份有限公司",
  "制药集团有限公司",
  "生物制药有限公司",
  "医药科技有限公司",
  "生物技术股份有限公司",
  "制药厂",
];

export const ROADS = [
  "科技路",
  "创新大道",
  "高新路",
  "医药大道",
  "生物城路",
  "长江路",
  "黄河路",
  "人民路",
  "建设路",
  "解放路",
  "中山路",
  "健康路",
  "工业园路",
  "滨江大道",
  "学苑路",
  "金桥路",
  "东方路",
  "华山路",
  "振兴路",
  "明珠大道",
];

/** National bodies; each province adds its own drug administration (see provinceUnit). */
export const NATIONAL_UNITS = [
  "国家药品监督管理局",
  "国家药典委员会",
  "国家卫生健康委员会",
  "国家药品监督管理局药品审评中心",
  "中国食品药品检定研究院",
];

/** The drug administration that supervises the companies of a province. */
export function provinceUnit(province: string): string {
  return `${province}药品监督管理局`;
}

/** 江苏省 → 江苏, 广西壮族自治区 → 广西, 北京市 → 北京. */
export function provinceShortName(province: string): string {
  return province.replace(/(壮族自治区|回族自治区|维吾尔自治区|自治区|省|市)$/u, "");
}
